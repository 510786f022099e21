"""Engine: backend choice, worklet dispatch, running a pipeline's stages in core, probing what they need."""
