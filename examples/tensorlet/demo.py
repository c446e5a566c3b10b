"""A small computation with tensorlet: what the README's first command runs."""

import tensorlet as tl

tl.manual_seed(0)
x = tl.randn(4, 3, requires_grad=True)
w = tl.randn(3, 2, requires_grad=True)
probabilities = (x @ w).softmax(dim=1)
loss = -probabilities.log().mean()
loss.backward()

print(f"tensorlet {tl.__version__}: softmax(x @ w) rows sum to {probabilities.sum(dim=1).tolist()}")
print(f"loss = {loss.item():.4f}; d loss / d w =\n{w.grad}")
