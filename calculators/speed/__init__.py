"""Speed model: decode and prefill step times with a basis (default fit or calibration) and a band."""
