"""State that outlives a step: `module` (`eager.Module`, which finds its variables and
submodules by walking attributes) and `trackable` (how objects name their children for
checkpoints). Variables themselves are `eager.variables`, kept at the top of the package by the
project layout; checkpoints (`eager.train`) belong to this layer too, in their public package
(optimizers, `eager.optimizers`, sit one layer up: their options use `eager.cond`)."""
