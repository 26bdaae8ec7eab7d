"""The machine a plan is made for (Machine) and the way from a catalog GPU id to one."""
