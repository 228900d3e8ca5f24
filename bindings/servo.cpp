// The servo kernel (bound when the C++ library has it): its chain, configuration and solver
// records, and Servo with array-level step/reject for the Python adapter
// (ikstack.servo.native). step releases the GIL; a Python DifferentialIK or MotionGenerator
// runs through the trampolines below, which take it back for the call.
#include "common.hpp"

#if __has_include("ikstack/servo.hpp")
#define IKSTACK_PY_HAVE_SERVO 1
#endif

#ifdef IKSTACK_PY_HAVE_SERVO
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <Python.h>
#include <structmember.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <vector>
#include <string>

#include "ikstack/diffik.hpp"
#include "ikstack/motion.hpp"
#include "ikstack/servo.hpp"
#endif

namespace ikstack_py {

#ifndef IKSTACK_PY_HAVE_SERVO
void bind_servo(nb::module_& m) { m.attr("HAVE_SERVO") = false; }
#else

namespace {

using ikstack::VecN;

/// A Python exception that is not an Exception (KeyboardInterrupt, SystemExit) raised inside
/// a callback: kept, and raised again once step() has returned.
struct Pending {
    std::optional<nb::python_error> error;
    void rethrow() {
        if (error) {
            error->restore();  // back into the interpreter, then out as this call's error
            error.reset();
            throw nb::python_error();
        }
    }
};

nb::object vec_copy(const VecN& v) { return new_array(v.data(), size_t(v.size())); }

/// Copies a 1-D float64 array into out (its length kept, up to the capacity); false when it is
/// not 1-D or too long.
bool copy_vec(const nb::handle& a, VecN& out) {
    CArray arr;
    if (!nb::try_cast(a, arr) || arr.ndim() != 1 || arr.shape(0) > size_t(ikstack::kMaxDof))
        return false;
    out.resize(int(arr.shape(0)));
    std::memcpy(out.data(), arr.data(), arr.shape(0) * sizeof(double));
    return true;
}

/// A Python DifferentialIK. The callback (the adapter's) builds the Python request, calls the
/// solver and normalizes the answer to (code, dq, iterations, message): code 0 ok, 1 a failed
/// result (message: why), 2 an exception (message: "Type: text").
class PySolver final : public ikstack::DifferentialIK {
public:
    PySolver(nb::object callback, std::string name, Pending* pending)
        : cb_(std::move(callback)), name_(std::move(name)), pending_(pending) {}

    ikstack::DiffIKResult solve(const ikstack::DiffIKRequest& req, VecN& dq) override {
        const int m = req.jacobian.rows(), n = req.jacobian.cols();
        dq.resize(n);
        int code = 2, iterations = 0;
        std::string message;
        {
            nb::gil_scoped_acquire gil;
            try {
                nb::tuple out = nb::cast<nb::tuple>(
                    cb_(new_array(req.jacobian.data(), size_t(m), size_t(n)),
                        new_array(req.task.data(), size_t(m)), vec_copy(req.q),
                        vec_copy(req.lower), vec_copy(req.upper),
                        vec_copy(req.preferred_velocity), req.damping, req.dt));
                code = nb::cast<int>(out[0]);
                iterations = nb::cast<int>(out[2]);
                message = nb::cast<std::string>(out[3]);
                if (code == 0 && !copy_vec(out[1], dq)) {
                    code = 1;
                    message = "solver returned an unreadable array";
                }
            } catch (nb::python_error& e) {
                pending_->error.emplace(std::move(e));
                message = "was interrupted";
            }
        }
        if (code == 2) throw std::runtime_error(message);
        if (code != 0) {
            dq.resize(n);
            return ikstack::DiffIKResult::failure(ikstack::DiffIKStatus::Failed, message.c_str(),
                                                  iterations);
        }
        ikstack::DiffIKResult r;
        r.iterations = iterations;
        r.set_message(message.c_str());
        return r;
    }
    const char* name() const override { return name_.c_str(); }

private:
    nb::object cb_;
    std::string name_;
    Pending* pending_;
};

/// A Python MotionGenerator. The callback returns (ok, q_ref, dq_ref, error): ok False with
/// error "Type: text" when it raised; the arrays as float64 (their shapes are checked here).
class PyGenerator final : public ikstack::MotionGenerator {
public:
    PyGenerator(nb::object generate, nb::object reset, Pending* pending)
        : gen_(std::move(generate)), reset_(std::move(reset)), pending_(pending) {}

    bool generate(const VecN& q, const VecN& dq, const VecN& desired, const VecN& lower,
                  const VecN& upper, const VecN& q_lower, const VecN& q_upper, double dt,
                  VecN& q_ref, VecN& dq_ref) override {
        nb::gil_scoped_acquire gil;
        try {
            nb::tuple out = nb::cast<nb::tuple>(
                gen_(vec_copy(q), vec_copy(dq), vec_copy(desired), vec_copy(lower),
                     vec_copy(upper), vec_copy(q_lower), vec_copy(q_upper), dt));
            if (!nb::cast<bool>(out[0])) {
                error_ = nb::cast<std::string>(out[3]);
                return false;
            }
            // a shape the copy cannot hold reads as an empty vector (the servo names the shapes)
            if (!copy_vec(out[1], q_ref)) q_ref.resize(0);
            if (!copy_vec(out[2], dq_ref)) dq_ref.resize(0);
            error_.clear();
            return true;
        } catch (nb::python_error& e) {
            pending_->error.emplace(std::move(e));
            error_ = "was interrupted";
            return false;
        }
    }
    void reset() override {
        nb::gil_scoped_acquire gil;
        reset_();
    }
    const char* error() const override { return error_.c_str(); }

private:
    nb::object gen_, reset_;
    std::string error_;
    Pending* pending_;
};

/// The bound servo: the kernel, its trampolines and a lock (step runs without the GIL).
struct PyServo {
    PyServo(const ikstack::ServoChain& chain, const ikstack::ServoConfig& config,
            const ikstack::ServoSolver& solver, nb::object solve_cb, const std::string& name,
            nb::object generate_cb, nb::object reset_cb) {
        if (!solve_cb.is_none())
            custom = std::make_unique<PySolver>(std::move(solve_cb), name, &pending);
        if (!generate_cb.is_none())
            generator = std::make_unique<PyGenerator>(std::move(generate_cb), std::move(reset_cb),
                                                      &pending);
        servo = std::make_unique<ikstack::Servo>(chain, config, solver, custom.get(),
                                                 generator.get());
    }
    Pending pending;
    std::unique_ptr<PySolver> custom;
    std::unique_ptr<PyGenerator> generator;
    std::unique_ptr<ikstack::Servo> servo;
    std::mutex mutex;
    /// the adapter's last accepted now_ns (a Python int, or None); the fast path updates it
    nb::object accepted_now = nb::none();
    /// whether fast_step may run (the adapter clears it while its times are relative)
    bool fast = true;
    /// the last message and its Python string (most cycles repeat it)
    std::string last_message;
    nb::object last_message_obj;
};

/// (action, status, message, task_residual, nullspace_speed, condition_number,
///  position_error, rotation_error, solver_iterations); the reference into out_q, out_dq.
nb::tuple result_tuple(const ikstack::ServoResult& r) {
    return nb::make_tuple(int(r.action), r.status, r.message, r.task_residual,
                          r.nullspace_speed, r.condition_number, r.position_error,
                          r.rotation_error, r.solver_iterations);
}

void load(const CArray& a, int n, ikstack::ServoVec& out, const char* what) {
    if (a.ndim() != 1 || a.shape(0) != size_t(n))
        raise_error("InputError", std::string(what) + " must have shape (" + std::to_string(n) +
                                      ",)");
    std::memcpy(out.data(), a.data(), size_t(n) * sizeof(double));
}

void check_out(const OutVec& a, int n) {
    if (a.shape(0) != size_t(n))
        raise_error("InputError", "the output arrays must have shape (" + std::to_string(n) +
                                      ",)");
}

nb::tuple step(PyServo& self, const CArray& q, const CArray& dq, std::int64_t stamp, int kind,
               const CArray& data, int frame, std::int64_t cstamp, double dt,
               std::int64_t now_ns, OutVec out_q, OutVec out_dq) {
    const int n = self.servo->dof();
    ikstack::JointState state;
    load(q, n, state.q, "q");
    load(dq, n, state.dq, "dq");
    state.stamp_ns = stamp;
    ikstack::ServoCommand cmd;
    cmd.type = static_cast<ikstack::CommandType>(kind);
    cmd.stamp_ns = cstamp;
    cmd.frame = frame;
    const size_t want = kind == 1 ? 16 : kind == 2 ? 6 : kind == 3 ? size_t(n) : 0;
    // a pose is a (4, 4) array, a twist (6,), a jog (dof,)
    const bool shape_ok = kind == 0 || (kind == 1 ? data.ndim() == 2 && data.shape(0) == 4 &&
                                                        data.shape(1) == 4
                                                  : data.ndim() == 1 && data.shape(0) == want);
    if (kind < 0 || kind > 3 || !shape_ok)
        raise_error("InputError", "command data has " + std::to_string(data.size()) +
                                      " values; expected " + std::to_string(want));
    double* dst = kind == 1 ? cmd.T.data() : kind == 2 ? cmd.twist.data() : cmd.velocities.data();
    if (want > 0) std::memcpy(dst, data.data(), want * sizeof(double));
    check_out(out_q, n);
    check_out(out_dq, n);
    std::unique_lock<std::mutex> lock(self.mutex, std::defer_lock);
    const ikstack::ServoResult* r;
    {
        nb::gil_scoped_release release;
        lock.lock();
        r = &self.servo->step(state, cmd, dt, now_ns);
        std::memcpy(out_q.data(), r->q.data(), size_t(n) * sizeof(double));
        std::memcpy(out_dq.data(), r->dq.data(), size_t(n) * sizeof(double));
    }
    nb::tuple out = result_tuple(*r);
    lock.unlock();
    self.pending.rethrow();
    return out;
}

nb::tuple reject(PyServo& self, nb::handle q, nb::handle dq, const std::string& message,
                 double dt, OutVec out_q, OutVec out_dq) {
    const int n = self.servo->dof();
    ikstack::JointState state;
    const bool has_state = !q.is_none();
    if (has_state) {
        load(nb::cast<CArray>(q), n, state.q, "q");
        load(nb::cast<CArray>(dq), n, state.dq, "dq");
    }
    check_out(out_q, n);
    check_out(out_dq, n);
    std::unique_lock<std::mutex> lock(self.mutex, std::defer_lock);
    const ikstack::ServoResult* r;
    {
        nb::gil_scoped_release release;
        lock.lock();
        r = &self.servo->reject(has_state ? &state : nullptr, message.c_str(), dt);
        std::memcpy(out_q.data(), r->q.data(), size_t(n) * sizeof(double));
        std::memcpy(out_dq.data(), r->dq.data(), size_t(n) * sizeof(double));
    }
    nb::tuple out = result_tuple(*r);
    lock.unlock();
    return out;
}


// ---------------------------------------------------------------- the fast path
// Servo.step's common case in one call: a JointState and a PoseCommand (or None) holding
// float64 C-contiguous arrays of the right shapes, a float dt and int times within 64 bits.
// The result record is built here; anything else returns None and the adapter's general path
// answers it (the same checks and messages).

/// The adapter's Python types (set once by fast_setup; held for the interpreter's lifetime).
struct FastTypes {
    PyObject* joint_state = nullptr;
    PyObject* pose_command = nullptr;
    PyTypeObject* result = nullptr;
    PyTypeObject* reference = nullptr;
    PyObject* actions[3] = {nullptr, nullptr, nullptr};
    PyObject* status_type = nullptr;
    PyObject* names[5] = {};  // q, dq, stamp_ns, T_base_target, stamp_ns (interned)
    Py_ssize_t result_slots[10] = {};  // action .. solver_iterations
    Py_ssize_t reference_slots[2] = {};  // q, dq
    std::vector<PyObject*> statuses;  // ServoStatus(flags) by flags, filled on first use
    bool ready = false;
};
FastTypes fast_types;

/// The offset of `name`'s slot in instances of `type` (a __slots__ object member).
Py_ssize_t slot_offset(PyTypeObject* type, const char* name) {
    PyObject* descr = PyDict_GetItemString(type->tp_dict, name);  // borrowed
    if (descr == nullptr || Py_TYPE(descr) != &PyMemberDescr_Type)
        throw std::invalid_argument(std::string(type->tp_name) + "." + name +
                                    " is not a __slots__ field");
    PyMemberDef* def = reinterpret_cast<PyMemberDescrObject*>(descr)->d_member;
    if (def->type != T_OBJECT_EX)
        throw std::invalid_argument(std::string(type->tp_name) + "." + name +
                                    " is not an object slot");
    return def->offset;
}

void fast_setup(nb::handle joint_state, nb::handle pose_command, nb::handle result,
                nb::handle reference, nb::tuple actions, nb::handle status_type) {
    if (fast_types.ready) return;
    if (_import_array() < 0) throw nb::python_error();  // numpy's C API (arrays in and out)
    FastTypes& f = fast_types;
    if (!PyType_Check(result.ptr()) || !PyType_Check(reference.ptr()) || nb::len(actions) != 3)
        throw std::invalid_argument("fast_setup: result and reference must be types");
    f.result = reinterpret_cast<PyTypeObject*>(result.ptr());
    f.reference = reinterpret_cast<PyTypeObject*>(reference.ptr());
    static const char* result_fields[10] = {
        "action", "reference", "status", "message", "task_residual", "nullspace_speed",
        "condition_number", "position_error", "rotation_error", "solver_iterations"};
    for (int i = 0; i < 10; ++i) f.result_slots[i] = slot_offset(f.result, result_fields[i]);
    f.reference_slots[0] = slot_offset(f.reference, "q");
    f.reference_slots[1] = slot_offset(f.reference, "dq");
    static const char* names[5] = {"q", "dq", "stamp_ns", "T_base_target", "stamp_ns"};
    for (int i = 0; i < 5; ++i) f.names[i] = PyUnicode_InternFromString(names[i]);
    f.joint_state = joint_state.inc_ref().ptr();
    f.pose_command = pose_command.inc_ref().ptr();
    Py_INCREF(f.result);
    Py_INCREF(f.reference);
    for (int i = 0; i < 3; ++i) f.actions[i] = nb::handle(actions[i]).inc_ref().ptr();
    f.status_type = status_type.inc_ref().ptr();
    f.statuses.assign(1 << 13, nullptr);
    f.ready = true;
}

/// obj's data when it is a native-order, C-contiguous float64 numpy array of shape (rows,)
/// (cols 0) or (rows, cols); else null.
const double* array_data(PyObject* obj, npy_intp rows, npy_intp cols) {
    if (!PyArray_Check(obj)) return nullptr;
    PyArrayObject* a = reinterpret_cast<PyArrayObject*>(obj);
    if (PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_ISNOTSWAPPED(a) ||
        !PyArray_IS_C_CONTIGUOUS(a) || PyArray_NDIM(a) != (cols == 0 ? 1 : 2))
        return nullptr;
    const npy_intp* dims = PyArray_DIMS(a);
    if (dims[0] != rows || (cols != 0 && dims[1] != cols)) return nullptr;
    return static_cast<const double*>(PyArray_DATA(a));
}

/// A new reference to obj's attribute, or null (the error cleared).
PyObject* attr(PyObject* obj, PyObject* name) {
    PyObject* v = PyObject_GetAttr(obj, name);
    if (v == nullptr) PyErr_Clear();
    return v;
}

/// An exact int within 64 bits, or false.
bool int64_of(PyObject* v, std::int64_t* out) {
    if (v == nullptr || !PyLong_CheckExact(v)) return false;
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow != 0 || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return false;
    }
    *out = x;
    return true;
}

nb::object fast_step(PyServo& self, nb::handle state_h, nb::handle command_h, nb::handle dt_h,
                     nb::handle now_h) {
    FastTypes& f = fast_types;
    PyObject* state = state_h.ptr();
    PyObject* command = command_h.ptr();
    const bool pose = command != Py_None;
    if (!f.ready || !self.fast || reinterpret_cast<PyObject*>(Py_TYPE(state)) != f.joint_state ||
        !PyFloat_CheckExact(dt_h.ptr()) ||
        (pose && reinterpret_cast<PyObject*>(Py_TYPE(command)) != f.pose_command))
        return nb::none();
    std::int64_t now_ns = 0, stamp = 0, cstamp = 0;
    if (!int64_of(now_h.ptr(), &now_ns)) return nb::none();
    const int n = self.servo->dof();
    ikstack::JointState js;
    ikstack::ServoCommand cmd;
    {
        nb::object q = nb::steal(attr(state, f.names[0]));
        nb::object dq = nb::steal(attr(state, f.names[1]));
        nb::object st = nb::steal(attr(state, f.names[2]));
        if (!q || !dq || !int64_of(st.ptr(), &stamp)) return nb::none();
        nb::object T, cst;
        if (pose) {
            T = nb::steal(attr(command, f.names[3]));
            cst = nb::steal(attr(command, f.names[4]));
            if (!T || !int64_of(cst.ptr(), &cstamp)) return nb::none();
        }
        const double* qd = array_data(q.ptr(), n, 0);
        const double* dqd = array_data(dq.ptr(), n, 0);
        const double* Td = pose ? array_data(T.ptr(), 4, 4) : nullptr;
        if (qd == nullptr || dqd == nullptr || (pose && Td == nullptr)) return nb::none();
        std::memcpy(js.q.data(), qd, size_t(n) * sizeof(double));
        std::memcpy(js.dq.data(), dqd, size_t(n) * sizeof(double));
        if (pose) std::memcpy(cmd.T.data(), Td, 16 * sizeof(double));
    }
    js.stamp_ns = stamp;
    cmd.type = static_cast<ikstack::CommandType>(pose ? 1 : 0);
    cmd.stamp_ns = cstamp;
    cmd.frame = 0;
    const double dt = PyFloat_AS_DOUBLE(dt_h.ptr());
    // the reference's arrays (new each cycle: the caller may keep the result)
    npy_intp dims[1] = {n};
    nb::object out_q = nb::steal(PyArray_SimpleNew(1, dims, NPY_DOUBLE));
    nb::object out_dq = nb::steal(PyArray_SimpleNew(1, dims, NPY_DOUBLE));
    if (!out_q || !out_dq) throw nb::python_error();
    auto data_of = [](const nb::object& a) {
        return static_cast<double*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(a.ptr())));
    };
    double* dst_q = data_of(out_q);
    double* dst_dq = data_of(out_dq);
    std::unique_lock<std::mutex> lock(self.mutex, std::defer_lock);
    const ikstack::ServoResult* r;
    {
        nb::gil_scoped_release release;
        lock.lock();
        r = &self.servo->step(js, cmd, dt, now_ns);
        std::memcpy(dst_q, r->q.data(), size_t(n) * sizeof(double));
        std::memcpy(dst_dq, r->dq.data(), size_t(n) * sizeof(double));
    }
    const int action = int(r->action);
    const std::uint32_t flags = r->status;
    if (r->message != self.last_message || !self.last_message_obj) {
        self.last_message = r->message;
        self.last_message_obj = nb::steal(PyUnicode_FromStringAndSize(
            r->message.data(), Py_ssize_t(r->message.size())));
        if (!self.last_message_obj) throw nb::python_error();
    }
    PyObject* values[10] = {nullptr};
    values[4] = PyFloat_FromDouble(r->task_residual);
    values[5] = PyFloat_FromDouble(r->nullspace_speed);
    values[6] = PyFloat_FromDouble(r->condition_number);
    values[7] = PyFloat_FromDouble(r->position_error);
    values[8] = PyFloat_FromDouble(r->rotation_error);
    values[9] = PyLong_FromLong(r->solver_iterations);
    lock.unlock();
    self.pending.rethrow();  // (the values above leak only on an interrupt: never mind)
    PyObject* status;
    if (flags < f.statuses.size() && f.statuses[flags] != nullptr) {
        status = f.statuses[flags];
        Py_INCREF(status);
    } else {
        status = PyObject_CallFunction(f.status_type, "k", static_cast<unsigned long>(flags));
        if (status == nullptr) throw nb::python_error();
        if (flags < f.statuses.size()) {
            f.statuses[flags] = status;
            Py_INCREF(status);  // the cache's reference
        }
    }
    if (action < 0 || action > 2) throw std::logic_error("unknown servo action");
    for (int i = 4; i < 10; ++i)
        if (values[i] == nullptr) throw nb::python_error();
    PyObject* ref = f.reference->tp_alloc(f.reference, 0);
    PyObject* res = ref ? f.result->tp_alloc(f.result, 0) : nullptr;
    if (res == nullptr) {
        Py_XDECREF(ref);
        throw nb::python_error();
    }
    // the records' slots filled directly (as object.__new__ and setting each field)
    auto slot = [](PyObject* o, Py_ssize_t off) {
        return reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + off);
    };
    *slot(ref, f.reference_slots[0]) = out_q.release().ptr();
    *slot(ref, f.reference_slots[1]) = out_dq.release().ptr();
    values[0] = f.actions[action];
    Py_INCREF(values[0]);
    values[1] = ref;
    values[2] = status;
    values[3] = self.last_message_obj.inc_ref().ptr();
    for (int i = 0; i < 10; ++i) *slot(res, f.result_slots[i]) = values[i];
    if (action != 2) self.accepted_now = nb::borrow(now_h);
    return nb::steal(res);
}

/// The four arguments of step(state, command, dt, now_ns) from a fast call with keywords, in
/// order; false when they are not exactly those (the general path then reports it).
bool step_arguments(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                    PyObject* out[4]) {
    static const char* names[4] = {"state", "command", "dt", "now_ns"};
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw != 4 || nargs > 4) return false;
    for (Py_ssize_t i = 0; i < 4; ++i) out[i] = i < nargs ? args[i] : nullptr;
    for (Py_ssize_t k = 0; k < nkw; ++k) {
        PyObject* key = PyTuple_GET_ITEM(kwnames, k);
        int slot = -1;
        for (int i = int(nargs); i < 4; ++i)
            if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0) slot = i;
        if (slot < 0 || out[slot] != nullptr) return false;
        out[slot] = args[nargs + k];
    }
    return true;
}

/// The adapter's step as a plain CPython fast-call function: `self` is (adapter, kernel). The
/// common case runs in fast_step; anything else (keywords that are not the four, wrong
/// counts, inputs fast_step does not take) goes to the adapter's _step.
PyObject* fast_step_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames) {
    PyObject* owner = PyTuple_GET_ITEM(self, 0);
    try {
        PyObject* a[4];
        const bool plain = kwnames == nullptr ? nargs == 4 && (std::copy(args, args + 4, a), true)
                                              : step_arguments(args, nargs, kwnames, a);
        if (plain) {
            nb::object res = fast_step(*nb::inst_ptr<PyServo>(PyTuple_GET_ITEM(self, 1)), a[0],
                                       a[1], a[2], a[3]);
            if (!res.is_none()) return res.release().ptr();
        }
        // the general path: the adapter's _step (its checks, in the Python servo's order)
        nb::object general = nb::borrow(owner).attr("_step");
        return PyObject_Vectorcall(general.ptr(), args, size_t(nargs), kwnames);
    } catch (nb::python_error& e) {
        e.restore();
    } catch (const std::bad_alloc&) {
        PyErr_NoMemory();
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
    }
    return nullptr;
}

PyMethodDef fast_step_def = {
    "step", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&fast_step_call)),
    METH_FASTCALL | METH_KEYWORDS,
    "step(state, command, dt, now_ns) -> ServoResult: one servo cycle (see "
    "ikstack.servo.Servo.step)"};

}  // namespace

void bind_servo(nb::module_& m) {
    m.attr("HAVE_SERVO") = true;
    using ikstack::ServoChain;
    using ikstack::ServoConfig;
    nb::class_<ikstack::ServoLinearRow>(m, "ServoLinearRow", "sum_i a_i q_i - b <= 0")
        .def(nb::init<>())
        .def_rw("a", &ikstack::ServoLinearRow::a)
        .def_rw("b", &ikstack::ServoLinearRow::b)
        .def_rw("name", &ikstack::ServoLinearRow::name);
    nb::class_<ikstack::ServoQuadrantRow>(m, "ServoQuadrantRow",
                                          "A quadrant-polynomial bound between two joints")
        .def(nb::init<>())
        .def_rw("i", &ikstack::ServoQuadrantRow::i)
        .def_rw("j", &ikstack::ServoQuadrantRow::j)
        .def_rw("table", &ikstack::ServoQuadrantRow::table)
        .def_rw("name", &ikstack::ServoQuadrantRow::name);
    nb::class_<ServoChain>(m, "ServoChain", "The chain as the servo kernel needs it")
        .def(nb::init<>())
        .def_rw("dof", &ServoChain::dof)
        .def_rw("joint_names", &ServoChain::joint_names)
        .def_rw("Rs", &ServoChain::Rs)
        .def_rw("ps", &ServoChain::ps)
        .def_rw("kinds", &ServoChain::kinds)
        .def_rw("R_end", &ServoChain::R_end)
        .def_rw("p_end", &ServoChain::p_end)
        .def_rw("lower", &ServoChain::lower)
        .def_rw("upper", &ServoChain::upper)
        .def_rw("velocity", &ServoChain::velocity)
        .def_rw("acceleration", &ServoChain::acceleration)
        .def_rw("jerk", &ServoChain::jerk)
        .def_rw("continuous", &ServoChain::continuous)
        .def_rw("kinematic_margin", &ServoChain::kinematic_margin)
        .def_rw("linear_rows", &ServoChain::linear_rows)
        .def_rw("quadrant_rows", &ServoChain::quadrant_rows)
        .def("check", &ServoChain::check);
    nb::class_<ServoConfig> cfg(m, "ServoConfig", "The servo's settings (see ikstack.servo)");
    cfg.def(nb::init<>())
        .def("set_task_axes",
             [](ServoConfig& c, const std::vector<int>& axes) {
                 c.set_task_axes(axes.data(), int(axes.size()));
             })
        .def("check", &ServoConfig::check)
        .def_rw("task_weights", &ServoConfig::task_weights)
        .def_rw("nullspace_reference", &ServoConfig::nullspace_reference)
        .def_rw("has_nullspace_reference", &ServoConfig::has_nullspace_reference);
#define IKSTACK_CFG(field) cfg.def_rw(#field, &ServoConfig::field)
    IKSTACK_CFG(max_linear_speed);
    IKSTACK_CFG(max_angular_speed);
    IKSTACK_CFG(pose_gain);
    IKSTACK_CFG(position_tolerance);
    IKSTACK_CFG(rotation_tolerance);
    IKSTACK_CFG(nullspace_gain);
    IKSTACK_CFG(joint_centering_gain);
    IKSTACK_CFG(damping);
    IKSTACK_CFG(command_timeout);
    IKSTACK_CFG(stop_velocity);
    IKSTACK_CFG(singularity_decelerate);
    IKSTACK_CFG(singularity_halt);
    IKSTACK_CFG(leaving_multiplier);
    IKSTACK_CFG(singularity_probe);
    IKSTACK_CFG(halt_scale);
    IKSTACK_CFG(leaving_min_scale);
    IKSTACK_CFG(escape_speed);
    IKSTACK_CFG(joint_limit_margin);
    IKSTACK_CFG(state_tolerance);
    IKSTACK_CFG(smoothing);
    IKSTACK_CFG(max_dt);
#undef IKSTACK_CFG
    nb::class_<ikstack::ServoSolver>(m, "ServoSolver", "The built-in solver and its settings")
        .def(nb::init<>())
        .def_prop_rw(
            "kind", [](const ikstack::ServoSolver& s) { return int(s.kind); },
            [](ikstack::ServoSolver& s, int k) {
                s.kind = k == 1 ? ikstack::ServoSolverKind::BOX_QP : ikstack::ServoSolverKind::DLS;
            })
        .def_rw("min_damping", &ikstack::ServoSolver::min_damping)
        .def_rw("max_iterations", &ikstack::ServoSolver::max_iterations)
        .def_rw("tolerance", &ikstack::ServoSolver::tolerance);
    m.def("servo_fast_setup", &fast_setup, nb::arg("joint_state"), nb::arg("pose_command"),
          nb::arg("result"), nb::arg("reference"), nb::arg("actions"), nb::arg("status"),
          "The adapter's types for Servo.fast_step (once per process)");
    nb::class_<PyServo>(m, "Servo",
                        "The servo kernel; ikstack.servo.Servo(..., backend='native') wraps it")
        .def(nb::init<const ikstack::ServoChain&, const ServoConfig&, const ikstack::ServoSolver&,
                      nb::object, const std::string&, nb::object, nb::object>(),
             nb::arg("chain"), nb::arg("config"), nb::arg("solver"), nb::arg("solve").none(),
             nb::arg("solver_name"), nb::arg("generate").none(), nb::arg("reset").none())
        .def("step", &step, nb::arg("q"), nb::arg("dq"), nb::arg("stamp_ns"), nb::arg("kind"),
             nb::arg("data"), nb::arg("frame"), nb::arg("command_stamp_ns"), nb::arg("dt"),
             nb::arg("now_ns"), nb::arg("out_q"), nb::arg("out_dq"),
             "One cycle; kind 0 none, 1 pose (data: 4x4), 2 twist (data: 6, frame 0 base, 1 "
             "tool), 3 joint jog (data: dof). Returns (action, status, message, "
             "task_residual, nullspace_speed, condition_number, position_error, "
             "rotation_error, solver_iterations); the reference goes into out_q, out_dq.")
        .def_static(
            "bind_step",
            [](nb::handle owner, nb::handle kernel) {
                if (!nb::isinstance<PyServo>(kernel))
                    throw std::invalid_argument("bind_step: kernel must be a Servo");
                nb::object pair = nb::make_tuple(owner, kernel);
                return nb::steal(PyCFunction_New(&fast_step_def, pair.ptr()));
            },
            nb::arg("owner"), nb::arg("kernel"),
            "owner's step as one call: the common case (a JointState, a PoseCommand or None, "
            "float64 arrays, a float dt, int times within 64 bits) runs here, anything else in "
            "owner._step(state, command, dt, now_ns)")
        .def_prop_rw(
            "accepted_now", [](PyServo& s) { return s.accepted_now; },
            [](PyServo& s, nb::handle v) { s.accepted_now = nb::borrow(v); },
            nb::for_setter(nb::arg("value").none()), "the last accepted now_ns (None: none yet)")
        .def_rw("fast", &PyServo::fast, "whether fast_step may run")
        .def("reject", &reject, nb::arg("q").none(), nb::arg("dq").none(), nb::arg("message"),
             nb::arg("dt"), nb::arg("out_q"), nb::arg("out_dq"),
             "REJECT with message: a stop from (q, dq) when usable, else from the last "
             "reference. Same return as step.")
        // the lock is taken without the GIL (a step in another thread may be in a callback)
        .def("reset",
             [](PyServo& s) {
                 nb::gil_scoped_release release;
                 std::lock_guard<std::mutex> lock(s.mutex);
                 s.servo->reset();
             })
        .def_prop_ro("faulted",
                     [](PyServo& s) {
                         nb::gil_scoped_release release;
                         std::lock_guard<std::mutex> lock(s.mutex);
                         return s.servo->faulted();
                     })
        .def_prop_ro("fault_message",
                     [](PyServo& s) {
                         std::string out;
                         {
                             nb::gil_scoped_release release;
                             std::lock_guard<std::mutex> lock(s.mutex);
                             out = s.servo->fault_message();
                         }
                         return out;
                     })
        .def_prop_ro("dof", [](PyServo& s) { return s.servo->dof(); });
}

#endif

}  // namespace ikstack_py
