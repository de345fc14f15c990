"""What a traced training step takes and returns, shared by a live trace
(tracing.Trace) and one read back from a graph file (graph_file.GraphFile)."""


class StepSignature:
    """The step takes the state — trainable parameters (`names`), then
    `frozen` parameters and `buffers` — and then the inputs; it returns the
    loss and the gradients of the trainable parameters and of the inputs
    listed in `input_grads`."""

    @property
    def state_names(self):
        return self.names + self.frozen + self.buffers

    @property
    def grad_names(self):
        return self.names + [f"input{i}" for i in self.input_grads]
