"""Fused updates of Keras 3's adaptive optimizers: RMSprop, Adagrad, Adadelta, Adamax, Nadam,
Lion and Ftrl (`eager.optimizers`).

The design is `training_ops`' (read its module doc): one op per variable and step updates the
variable and its slots with every storage locked (in resource-uid order), in place when the
buffers are not shared, stores inf or nan as TensorFlow does, and never leaves a step half
applied. The shared machinery (`locked_update`, `in_blocks`, `sparse_rows`, `densified`, the
inference) comes from there, the gate of a sparse write (`keep_where`) from `resource_ops`; this
module holds only the arithmetic, which is Keras 3's `update_step`, operation for operation and
in the same order, so each rounding happens where Keras' does.

Scalars are inputs of the variable's dtype, computed by the optimizer with Keras' roundings
(some of Keras' `1 - beta` are Python doubles, others float32 differences of a cast beta: the
optimizer knows which). Every op here takes its scalars in one documented order, listed beside
its registration below.

Sparse gradients (IndexedSlices: `values` at rows `indices`) reach the Sparse variants, which
compute what Keras 3 computes on TensorFlow: the slices summed per row into the dense gradient,
then the dense update. Where Keras applies `square` or `abs` to the slices before they meet a
dense tensor, the op sums the squared (or absolute) slices per row instead of squaring the sum,
as Keras does; the two differ only when `indices` repeat a row (then also in the last bits of
the rows Keras scatters slice by slice). Adadelta keeps more of its arithmetic on the slices
(each slice's step, its square), and its sparse op does the same.
"""

from __future__ import annotations

from .scatter_add import scatter_add
from .resource_ops import keep_where
from .training_ops import densified, in_blocks, locked_update, register_update, sparse_rows

__all__ = ["APPLY_RMSPROP", "APPLY_RMSPROP_MOMENTUM", "APPLY_CENTERED_RMSPROP",
           "APPLY_CENTERED_RMSPROP_MOMENTUM", "APPLY_ADAGRAD", "APPLY_ADADELTA", "APPLY_ADAMAX",
           "APPLY_NADAM", "APPLY_LION", "APPLY_FTRL", "SPARSE"]


# -----------------------------------------------------------------------------------------------
# The arithmetic: `math(xp, var, *slots, *scalars, grad, derived=None)` updates in place.
# `derived` is the per-row sum of squared (or absolute) slices for a sparse gradient.
# -----------------------------------------------------------------------------------------------

def _square(xp, grad, derived, like):
    if derived is not None:
        return derived.copy()
    return xp.multiply(grad, grad, out=xp.empty_like(like))  # out=: arrays even at rank 0


def _rmsprop_math(centered, with_momentum):
    def math(xp, var, v, *rest):
        slots = rest[:with_momentum + centered]
        lr, rho, one_minus_rho, epsilon, momentum, grad = rest[len(slots):len(slots) + 6]
        derived = rest[len(slots) + 6] if len(rest) > len(slots) + 6 else None
        mom = slots[0] if with_momentum else None
        avg = slots[-1] if centered else None
        tmp = _square(xp, grad, derived, var)
        xp.multiply(tmp, one_minus_rho, out=tmp)
        xp.multiply(v, rho, out=v)
        xp.add(v, tmp, out=v)
        if centered:
            xp.multiply(grad, one_minus_rho, out=tmp)
            xp.multiply(avg, rho, out=avg)
            xp.add(avg, tmp, out=avg)
            xp.multiply(avg, avg, out=tmp)
            xp.subtract(v, tmp, out=tmp)
            xp.add(tmp, epsilon, out=tmp)
        else:
            xp.add(v, epsilon, out=tmp)
        xp.sqrt(tmp, out=tmp)
        increment = xp.multiply(grad, lr, out=xp.empty_like(var))
        xp.divide(increment, tmp, out=increment)
        if with_momentum:
            xp.multiply(mom, momentum, out=mom)
            xp.add(mom, increment, out=mom)
            increment = mom
        xp.subtract(var, increment, out=var)
    return math


def _adagrad_math(xp, var, acc, lr, epsilon, grad, derived=None):
    tmp = _square(xp, grad, derived, var)
    xp.add(acc, tmp, out=acc)
    xp.add(acc, epsilon, out=tmp)
    xp.sqrt(tmp, out=tmp)
    step = xp.multiply(grad, lr, out=xp.empty_like(var))
    xp.divide(step, tmp, out=step)
    xp.subtract(var, step, out=var)


def _adadelta_math(xp, var, acc_grad, acc_delta, lr, rho, one_minus_rho, epsilon, grad,
                   derived=None):
    tmp = _square(xp, grad, derived, var)
    xp.multiply(tmp, one_minus_rho, out=tmp)
    xp.multiply(acc_grad, rho, out=acc_grad)
    xp.add(acc_grad, tmp, out=acc_grad)
    delta = xp.add(acc_delta, epsilon, out=xp.empty_like(var))  # rms(accumulated_delta_var)
    xp.sqrt(delta, out=delta)
    xp.multiply(delta, grad, out=delta)
    xp.add(acc_grad, epsilon, out=tmp)  # rms(accumulated_grad)
    xp.sqrt(tmp, out=tmp)
    xp.divide(delta, tmp, out=delta)
    xp.negative(delta, out=delta)
    xp.multiply(delta, delta, out=tmp)
    xp.multiply(tmp, one_minus_rho, out=tmp)
    xp.multiply(acc_delta, rho, out=acc_delta)
    xp.add(acc_delta, tmp, out=acc_delta)
    xp.multiply(delta, lr, out=delta)
    xp.add(var, delta, out=var)


def _adamax_math(xp, var, m, u, lr, one_minus_beta_1, beta_2, epsilon, one_minus_beta_1_power,
                 grad, derived=None):
    tmp = xp.subtract(grad, m, out=xp.empty_like(var))
    xp.multiply(tmp, one_minus_beta_1, out=tmp)
    xp.add(m, tmp, out=m)
    magnitude = derived if derived is not None else xp.abs(grad, out=tmp)
    xp.multiply(u, beta_2, out=u)
    xp.maximum(u, magnitude, out=u)
    step = xp.multiply(m, lr, out=xp.empty_like(var))
    xp.add(u, epsilon, out=tmp)
    xp.multiply(tmp, one_minus_beta_1_power, out=tmp)
    xp.divide(step, tmp, out=step)
    xp.subtract(var, step, out=var)


def _nadam_math(xp, var, m, v, lr, one_minus_beta_1, one_minus_beta_2, epsilon, u_t_1,
                one_minus_u_product_t_1, one_minus_u_t, one_minus_u_product_t,
                one_minus_beta_2_power, grad, derived=None):
    tmp = xp.subtract(grad, m, out=xp.empty_like(var))
    xp.multiply(tmp, one_minus_beta_1, out=tmp)
    xp.add(m, tmp, out=m)
    if derived is None:
        xp.multiply(grad, grad, out=tmp)
        xp.subtract(tmp, v, out=tmp)
    else:
        xp.subtract(derived, v, out=tmp)
    xp.multiply(tmp, one_minus_beta_2, out=tmp)
    xp.add(v, tmp, out=v)
    m_hat = xp.multiply(m, u_t_1, out=xp.empty_like(var))
    xp.divide(m_hat, one_minus_u_product_t_1, out=m_hat)
    xp.multiply(grad, one_minus_u_t, out=tmp)
    xp.divide(tmp, one_minus_u_product_t, out=tmp)
    xp.add(m_hat, tmp, out=m_hat)
    xp.divide(v, one_minus_beta_2_power, out=tmp)  # v_hat
    xp.sqrt(tmp, out=tmp)
    xp.add(tmp, epsilon, out=tmp)
    xp.multiply(m_hat, lr, out=m_hat)
    xp.divide(m_hat, tmp, out=m_hat)
    xp.subtract(var, m_hat, out=var)


def _lion_math(xp, var, m, lr, beta_1, one_minus_beta_1, beta_2, one_minus_beta_2, grad,
               derived=None):
    tmp = xp.multiply(grad, one_minus_beta_1, out=xp.empty_like(var))
    direction = xp.multiply(m, beta_1, out=xp.empty_like(var))
    xp.add(direction, tmp, out=direction)
    xp.sign(direction, out=direction)
    xp.multiply(direction, lr, out=direction)
    xp.subtract(var, direction, out=var)
    xp.multiply(grad, one_minus_beta_2, out=tmp)
    xp.multiply(m, beta_2, out=m)
    xp.add(m, tmp, out=m)


def _ftrl_math(xp, var, accum, linear, lr, neg_lr_power, l1, two_l2_reg, two_l2_shrinkage,
               grad, derived=None):
    new_accum = _square(xp, grad, derived, var)
    xp.add(accum, new_accum, out=new_accum)
    grad_to_use = xp.multiply(var, two_l2_shrinkage, out=xp.empty_like(var))
    xp.add(grad, grad_to_use, out=grad_to_use)
    new_power = xp.power(new_accum, neg_lr_power)
    tmp = xp.power(accum, neg_lr_power)
    xp.subtract(new_power, tmp, out=tmp)
    xp.divide(tmp, lr, out=tmp)
    xp.multiply(tmp, var, out=tmp)
    xp.subtract(grad_to_use, tmp, out=tmp)
    xp.add(linear, tmp, out=linear)
    xp.divide(new_power, lr, out=new_power)  # quadratic
    xp.add(new_power, two_l2_reg, out=new_power)
    xp.clip(linear, -l1, l1, out=tmp)
    xp.subtract(tmp, linear, out=tmp)
    xp.divide(tmp, new_power, out=var)
    accum[...] = new_accum


# -----------------------------------------------------------------------------------------------
# Kernels: one dense and one sparse op per optimizer
# -----------------------------------------------------------------------------------------------

def _square_slices(xp, values):
    return xp.multiply(values, values)


def _abs_slices(xp, values):
    return xp.abs(values)


def _sparse_adadelta_math(op_name, xp, var, acc_grad, acc_delta, lr, rho, one_minus_rho,
                          epsilon, values, indices):
    """Adadelta for IndexedSlices, slice by slice where Keras keeps the slices: each slice's
    step `d` uses its row's accumulators, the delta accumulator receives the per-row sum of
    the squared steps, and the variable the steps scattered one after the other."""
    rows, slices, bad = sparse_rows(op_name, xp, var.shape, values, indices)

    def update():
        tmp = densified(xp, var.shape, var.dtype, rows, slices * slices)
        xp.multiply(tmp, one_minus_rho, out=tmp)
        xp.multiply(acc_grad, rho, out=acc_grad)
        xp.add(acc_grad, tmp, out=acc_grad)
        step = xp.sqrt(xp.add(acc_delta, epsilon))[rows] * slices
        step = -(step / xp.sqrt(xp.add(acc_grad[rows], epsilon)))
        squares = densified(xp, var.shape, var.dtype, rows, step * step)
        xp.multiply(squares, one_minus_rho, out=squares)
        xp.multiply(acc_delta, rho, out=acc_delta)
        xp.add(acc_delta, squares, out=acc_delta)
        scatter_add(xp, var, rows, step * lr)

    keep_where(xp, bad, (var, acc_grad, acc_delta), update)


def _define(name, math, n_slots, n_scalars, derive=None, sparse_math=None):
    """Registers ResourceApply<name> (var, *slots, *scalars, grad) and ResourceSparseApply<name>
    (var, *slots, *scalars, values, indices) running `math`. `derive(xp, values)` is what Keras
    computes on the slices before densifying (squares, magnitudes), if anything."""
    dense_name, sparse_name = f"ResourceApply{name}", f"ResourceSparseApply{name}"
    n_handles = 1 + n_slots
    scalar_at = tuple(range(n_handles, n_handles + n_scalars))

    def kernel(xp, var, *rest):
        slots, scalars, grad = rest[:n_slots], rest[n_slots:-1], rest[-1]
        return locked_update(dense_name, (var, *slots), grad,
                             lambda *a: math(xp, *a[:-1], *scalars, a[-1]), xp=xp)

    def sparse_kernel(xp, var, *rest):
        slots, scalars = rest[:n_slots], rest[n_slots:-2]
        values, indices = rest[-2:]

        def update(*arrays):
            if sparse_math is not None:
                return sparse_math(sparse_name, xp, *arrays, *scalars, values, indices)
            w = arrays[0]
            rows, slices, bad = sparse_rows(sparse_name, xp, w.shape, values, indices)
            grad = densified(xp, w.shape, w.dtype, rows, slices)
            extra = () if derive is None else (
                densified(xp, w.shape, w.dtype, rows, derive(xp, slices)),)
            keep_where(xp, bad, arrays, lambda: in_blocks(
                xp, lambda *a: math(xp, *a[:n_handles], *scalars, *a[n_handles:]),
                (*arrays, grad, *extra)))
        return locked_update(sparse_name, (var, *slots), values, update, dense=False)

    kernel.__doc__ = f"Keras 3's {name} update of a variable and its {n_slots} slot(s)."
    sparse_kernel.__doc__ = f"Keras 3's {name} update for an IndexedSlices gradient."
    dense = register_update(dense_name, kernel, n_handles, scalar_at, n_handles + n_scalars)
    sparse = register_update(sparse_name, sparse_kernel, n_handles, scalar_at,
                             n_handles + n_scalars, n_handles + n_scalars + 1)
    SPARSE[dense] = sparse
    return dense


#: The sparse variant of each dense op defined here.
SPARSE: dict = {}

#: (var, velocity; lr, rho, 1 - rho, epsilon, momentum; grad). `momentum` is unused here.
APPLY_RMSPROP = _define("KerasRMSProp", _rmsprop_math(False, False), 1, 5, _square_slices)
#: (var, velocity, momentum_slot; lr, rho, 1 - rho, epsilon, momentum; grad).
APPLY_RMSPROP_MOMENTUM = _define("KerasRMSPropWithMomentum", _rmsprop_math(False, True), 2, 5,
                                 _square_slices)
#: (var, velocity, average_gradient; lr, rho, 1 - rho, epsilon, momentum; grad).
APPLY_CENTERED_RMSPROP = _define("KerasCenteredRMSProp", _rmsprop_math(True, False), 2, 5,
                                 _square_slices)
#: (var, velocity, momentum_slot, average_gradient; lr, rho, 1 - rho, epsilon, momentum; grad).
APPLY_CENTERED_RMSPROP_MOMENTUM = _define("KerasCenteredRMSPropWithMomentum",
                                          _rmsprop_math(True, True), 3, 5, _square_slices)
#: (var, accumulator; lr, epsilon; grad).
APPLY_ADAGRAD = _define("KerasAdagrad", _adagrad_math, 1, 2, _square_slices)
#: (var, accumulated_grad, accumulated_delta_var; lr, rho, 1 - rho, epsilon; grad).
APPLY_ADADELTA = _define("KerasAdadelta", _adadelta_math, 2, 4,
                         sparse_math=_sparse_adadelta_math)
#: (var, momentum, norm; lr, 1 - beta_1, beta_2, epsilon, 1 - beta_1 ** step; grad).
APPLY_ADAMAX = _define("KerasAdamax", _adamax_math, 2, 5, _abs_slices)
#: (var, momentum, velocity; lr, 1 - beta_1, 1 - beta_2, epsilon, u_t_1, 1 - u_product_t_1,
#: 1 - u_t, 1 - u_product_t, 1 - beta_2 ** step; grad).
APPLY_NADAM = _define("KerasNadam", _nadam_math, 2, 9, _square_slices)
#: (var, momentum; lr, beta_1, 1 - beta_1, beta_2, 1 - beta_2; grad).
APPLY_LION = _define("KerasLion", _lion_math, 1, 5)
#: (var, accumulator, linear; lr, -learning_rate_power, l1, 2 * l2_reg, 2 * l2_shrinkage; grad).
APPLY_FTRL = _define("KerasFtrl", _ftrl_math, 2, 5, _square_slices)
