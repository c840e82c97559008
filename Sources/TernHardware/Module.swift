// TernHardware module.
