# Pallas Playground for a TPU VM: one image, two services (see README, "Deploying on a TPU VM").
#   web:    the HTTP server, unprivileged (uid 10001, group 10001), no sandbox machinery, no TPU devices;
#   runner: the job runner (scripts/runner-entrypoint → python -m sandbox.backends.service), which owns
#           the TPU device nodes (VFIO groups or accel nodes), a writable cgroup and the sandbox; one
#           slot per chip, CPU slots for interpret runs; no network, no credentials. Its socket is
#           given to group 10001 (--socket-group), so the web server can connect.
# UNTESTED ON HARDWARE: written and linted on machines without a Docker engine or a TPU.
FROM python:3.12.12-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# bubblewrap and libseccomp2 are the hardened sandbox's outer jail and seccomp layer;
# patchelf lets scripts/install-job-runtime make a relocatable, world-readable job interpreter.
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        bubblewrap=0.8.0-2+deb12u1 libseccomp2=2.5.4-1+deb12u1 patchelf=0.14.3-1+b1 \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 playground \
    && useradd --system --uid 10001 --gid playground --home-dir /srv/playground --create-home web

WORKDIR /opt/playground
COPY pyproject.toml constraints.txt README.md ./
COPY server ./server
# The page the server serves at /static (not package data: see server/routes/pages.py).
COPY frontend/static ./frontend/static
COPY sandbox ./sandbox
# The Python client: `python -m sandbox run FILE --server URL` in the image too.
COPY pallas_playground ./pallas_playground
COPY kernels_catalog ./kernels_catalog
COPY scripts ./scripts

# jax[tpu] at the same pin as everywhere else (share links record the versions a kernel ran on); the
# job runtime walks the extras .venv has, so it gets libtpu too (the runner refuses to start without).
RUN python -m venv .venv \
    && .venv/bin/pip install -c constraints.txt ".[tpu]" \
    && scripts/install-job-runtime --quiet

ENV PATH=/opt/playground/.venv/bin:$PATH \
    PLAYGROUND_HOST=0.0.0.0 \
    PLAYGROUND_DATA_DIR=/srv/playground/var \
    PLAYGROUND_SANDBOX=remote:/run/playground/runner.sock

USER 10001:10001
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/api/health', timeout=4)"]
CMD ["python", "-m", "server"]
