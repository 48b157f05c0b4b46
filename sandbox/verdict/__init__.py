"""The checker: a run's verdict, made outside every process that ran user code.

A run is two jobs (`sandbox.backends.checking`): the reference's process makes each case's inputs
and expected outputs, the kernel's process runs the kernel and sends what it returned; both send
arrays over the size-capped protocol channel (`sandbox.protocol.arrays`). Here, in the trusted
process that ran both jobs, the arrays are decoded and checked against their headers
(`arrays`), compared with each output's tolerance (`compare`, `tolerances`), an output too large to
send whole on its sampled rows and, over every element, by per-group sums both jobs compute the same
way (`digests`, `sums`), and a case's verdict is made (`judge`), with the warning when the check
could not tell a wrong kernel from a right one (`vacuous`); a sweep config's row is made the same
way (`configs`). Pure numpy, no JAX: the server and the workers import it.
"""
