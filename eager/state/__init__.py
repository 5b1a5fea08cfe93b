"""State: trackable objects and modules (variables themselves are `eager.variables`)."""
