#!/usr/bin/python3
"""Real gradients for compress_perf: trains a small MLP on scikit-learn's bundled digits dataset
(no download) with plain numpy for a few SGD steps and writes the gradients as raw little-endian
float32 files.

Run with the system Python (numpy and sklearn are installed for /usr/bin/python3 only):

    /usr/bin/python3 bench/compress/make_gradients.py /tmp/gradients

Writes, for each saved step S:
    OUT/mlp_step<S>.f32         every parameter's gradient, flattened layer by layer (W then b)
    OUT/mlp_step<S>_fc2.f32     the largest layer's weight gradient alone
"""
import argparse
import os

import numpy as np
from sklearn.datasets import load_digits


def init_layers(sizes, rng):
    """He-initialized weights and zero biases."""
    layers = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = rng.standard_normal((fan_in, fan_out)).astype(np.float32) * np.float32(np.sqrt(2.0 / fan_in))
        layers.append([w, np.zeros(fan_out, dtype=np.float32)])
    return layers


def gradients(layers, x, y):
    """Loss and per-layer (dW, db) of softmax cross-entropy over ReLU layers."""
    activations = [x]
    h = x
    for i, (w, b) in enumerate(layers):
        h = h @ w + b
        if i + 1 < len(layers):
            h = np.maximum(h, 0)
        activations.append(h)
    logits = activations[-1]
    logits = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    loss = -np.log(p[np.arange(len(y)), y] + 1e-12).mean()
    delta = p
    delta[np.arange(len(y)), y] -= 1
    delta /= len(y)
    grads = [None] * len(layers)
    for i in reversed(range(len(layers))):
        grads[i] = (activations[i].T @ delta, delta.sum(axis=0))
        if i > 0:
            delta = (delta @ layers[i][0].T) * (activations[i] > 0)
    return loss, grads


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="directory for the .f32 files")
    parser.add_argument("--hidden", type=int, default=1024, help="width of the two hidden layers")
    parser.add_argument("--steps", type=int, default=20, help="SGD steps")
    parser.add_argument("--save", type=int, nargs="*", default=[1, 10, 20], help="steps whose gradients are written")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target
    rng = np.random.default_rng(0)
    layers = init_layers([x.shape[1], args.hidden, args.hidden, 10], rng)
    count = sum(w.size + b.size for w, b in layers)
    print(f"MLP 64-{args.hidden}-{args.hidden}-10: {count} parameters ({4 * count / 2**20:.2f} MiB of float32)")

    os.makedirs(args.out, exist_ok=True)
    for step in range(1, args.steps + 1):
        batch = rng.choice(len(x), args.batch, replace=False)
        loss, grads = gradients(layers, x[batch], y[batch])
        if step in args.save:
            flat = np.concatenate([np.concatenate([dw.ravel(), db]) for dw, db in grads]).astype("<f4")
            path = os.path.join(args.out, f"mlp_step{step}.f32")
            flat.tofile(path)
            grads[1][0].astype("<f4").tofile(os.path.join(args.out, f"mlp_step{step}_fc2.f32"))
            print(f"step {step}: loss {loss:.4f}, wrote {path} ({flat.nbytes} bytes) and the fc2 weights")
        for (w, b), (dw, db) in zip(layers, grads):
            w -= np.float32(args.lr) * dw.astype(np.float32)
            b -= np.float32(args.lr) * db.astype(np.float32)


if __name__ == "__main__":
    main()
