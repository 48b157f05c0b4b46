"""The host a job runs on: the job's environment, the JAX runtimes installed, the TPU chips,
and the logs' format. Host side: no JAX."""
