"""An independent pilot for readback tests and `livefreq bench readback`: its own word tables (not
the engine's), readbacks correct or with one value changed or dropped, and a driver that brings a
session to any readback state of any flow."""
