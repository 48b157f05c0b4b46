"""Will it compile on a TPU: the real Pallas → Mosaic lowering with interpret mode off (`check`),
static checks of the kernel against the chip (`chip_checks`), and IR as text (`irtext`)."""
