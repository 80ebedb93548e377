// Issue 50: filled in by its owner.
