"""The servewise command line (`python -m cli`, `python -m calculators`): memory, recommend and reconcile verbs."""
