"""What the harness checks about a kernel's run: outputs against the reference (`compare`), timing
(`timing`), VMEM/SMEM from the traced kernel (`memory`), and data races (`races`)."""
