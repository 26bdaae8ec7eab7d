"""Scripts that print performance figures against their budgets: `make bench` runs each as `python -m bench.<name>`."""
