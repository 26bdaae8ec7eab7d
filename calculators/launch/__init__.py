"""Engine launch commands: parse a command as typed, turn it into that engine's Settings,
and render Settings back as a command."""
