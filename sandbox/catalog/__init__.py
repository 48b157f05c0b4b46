"""The kernel catalog: its entries (`entries`) and where each worked solution passes (`runtimes`)."""
