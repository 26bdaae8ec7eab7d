"""The engine wizard: a team's answers, the scoring that ranks engines,
the fits-one-card check and memory plans for the top choices."""
