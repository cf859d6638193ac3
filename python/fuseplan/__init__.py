"""fuseplan - what a target compiler will fuse, how much memory a model needs, how much faster it
runs: fuseplan's C library (libfuseplan.so.1, lib/fuseplan.h) from Python.

    import fuseplan
    r = fuseplan.report("model.onnx", device="h100", dims={"batch": 8})
    print(r["stages"][-1]["est_latency_s"])

Each function runs the `fuseplan` command of its name in this process, with its JSON output, and
returns the document as a dict (the contract of docs/json.md). `model` is a path, the model's
bytes, or an `onnx.ModelProto` (serialized in memory, never written to disk). Options are the
command's long options as keyword arguments: `device="h100"` for `--device h100`, `batch=8`,
`kv_dtype="fp8"` for `--kv-dtype fp8`, `verbose=True` for a flag, a list for a repeatable option,
and `dims={"seq": 128}` and `inputs={"input": [1, 3, 224, 224]}` for `--dim` and `--input`.
A failure raises `fuseplan.Error` with the command's one-line message and its class: `bad_input`
(the command's exit status 2) or `policy_failed` (a gate that failed, exit 1: the document is in
`Error.result`). Warnings the command prints (op types it does not know, ...) are issued as
`fuseplan.FuseplanWarning`. Calls from several threads run at once (the library releases the GIL).
"""
import ctypes
import ctypes.util
import json
import os
import tempfile
import threading
import warnings

__all__ = ["Error", "FuseplanWarning", "BAD_INPUT", "POLICY_FAILED", "report", "explain", "memory",
           "headroom", "train", "gate", "run", "version"]

BAD_INPUT = "bad_input"
POLICY_FAILED = "policy_failed"


class Error(Exception):
    """A fuseplan command failed: `message` is its one line (as the executable prints it on
    standard error), `kind` BAD_INPUT or POLICY_FAILED, `exit_code` its exit status (2 or 1), and
    `result` the document it wrote anyway (a gate's checks), else None."""

    def __init__(self, message, kind, exit_code, result=None):
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.exit_code = exit_code
        self.result = result


class FuseplanWarning(UserWarning):
    """A line a command printed on standard error while succeeding."""


class _Model(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.c_char_p), ("len", ctypes.c_size_t)]


_lib = None
_lib_lock = threading.Lock()
# a relative $FUSEPLAN_LIBRARY is relative to the directory the program started in
_env_library = os.path.abspath(os.environ["FUSEPLAN_LIBRARY"]) if os.environ.get("FUSEPLAN_LIBRARY") else None


def _candidates():
    """Where libfuseplan.so.1 is looked for, in order: $FUSEPLAN_LIBRARY, beside this package
    (`make python` and pip put it there), the source tree's build/, the system's library path."""
    here = os.path.dirname(os.path.abspath(__file__))
    if _env_library:
        yield _env_library
    yield os.path.join(here, "libfuseplan.so.1")
    yield os.path.join(here, os.pardir, os.pardir, "build", "libfuseplan.so.1")
    found = ctypes.util.find_library("fuseplan")
    if found:
        yield found


def _library():
    global _lib
    with _lib_lock:
        if _lib is None:
            tried = []
            for path in _candidates():
                if os.sep in path and not os.path.exists(path):
                    tried.append(path + " (absent)")
                    continue
                try:
                    lib = ctypes.CDLL(path)
                except OSError as e:
                    tried.append(f"{path} ({e})")
                    continue
                lib.fuseplan_run.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_Model),
                                             ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                                             ctypes.POINTER(ctypes.c_void_p)]
                lib.fuseplan_run.restype = ctypes.c_int
                lib.fuseplan_free.argtypes = [ctypes.c_void_p]
                lib.fuseplan_version.restype = ctypes.c_char_p
                _lib = lib
                break
            else:
                raise ImportError("fuseplan: libfuseplan.so.1 not found (build it with `make python`, or set "
                                  "FUSEPLAN_LIBRARY); tried: " + "; ".join(tried))
        return _lib


def version():
    """The library's version, as `fuseplan --version` prints it."""
    return _library().fuseplan_version().decode()


def _model_bytes(model):
    """The bytes of a model given in memory (bytes-like or an onnx.ModelProto), else None."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString()
    return None


def run(args, model=None):
    """Runs `fuseplan ARGS...` (args: a list of strings, the command first) in this process and
    returns (exit_status, stdout, stderr) as the executable would give them. model: None, or
    (name, bytes): an argument equal to name reads the bytes instead of a file."""
    lib = _library()
    argv = (ctypes.c_char_p * len(args))(*[os.fsencode(a) for a in args])
    m = None
    if model is not None:
        name, data = model
        m = _Model(os.fsencode(name), data, len(data))
    out, msg, n = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_size_t()
    rc = lib.fuseplan_run(len(args), argv, ctypes.byref(m) if m is not None else None, ctypes.byref(out),
                          ctypes.byref(n), ctypes.byref(msg))
    try:
        text = ctypes.string_at(out, n.value).decode("utf-8", "replace")
        errors = ctypes.string_at(msg).decode("utf-8", "replace")
    finally:
        lib.fuseplan_free(out)
        lib.fuseplan_free(msg)
    return rc, text, errors


def _option_args(options):
    """Keyword options as the command line's arguments."""
    args = []
    for key, value in options.items():
        if key in ("format", "output"):
            raise TypeError(f"fuseplan: option '{key}' is not for the Python API (it returns the JSON document)")
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif key == "dims" and isinstance(value, dict):
            args += [a for k, v in value.items() for a in ("--dim", f"{k}={v}")]
        elif key == "inputs" and isinstance(value, dict):
            for name, dims in value.items():
                spec = dims if isinstance(dims, str) else "x".join(str(d) for d in dims)
                args += ["--input", f"{name}:{spec}"]
        elif isinstance(value, (list, tuple)):
            args += [a for v in value for a in (flag, str(v))]
        else:
            args += [flag, str(value)]
    return args


def _command(command, model, name, before, options):
    """Runs command on model with -f json; the document, or raises Error."""
    data = _model_bytes(model)
    if data is not None:
        path, mem = name or "<memory>", (name or "<memory>", data)
    elif isinstance(model, (str, os.PathLike)):
        path, mem = os.fspath(model), None
    else:
        raise TypeError("fuseplan: model must be a path, bytes or an onnx.ModelProto, not "
                        + type(model).__name__)
    rc, out, errors = run([command, "-f", "json"] + before + _option_args(options) + ["--", path], mem)
    lines = [line for line in errors.splitlines() if line]
    doc = json.loads(out) if out.strip() else None
    if rc == 0:
        for line in lines:
            warnings.warn(line, FuseplanWarning, stacklevel=3)
        return doc
    kind = POLICY_FAILED if rc == 1 else BAD_INPUT
    raise Error(lines[-1] if lines else f"fuseplan {command}: exit status {rc}", kind, rc, doc)


def report(model, *, name=None, **options):
    """`fuseplan report`: stages, fusions, layout, memory plan, per-op costs, KV cache, headroom.
    name: what a model given in memory is called in the document and in messages."""
    return _command("report", model, name, [], options)


def explain(model, *, name=None, **options):
    """`fuseplan explain`: every fusion candidate of the target, applied or refused and why."""
    return _command("explain", model, name, [], options)


def memory(model, *, name=None, **options):
    """`fuseplan memory`: the activation memory plan, its floor and the peak explained."""
    return _command("memory", model, name, [], options)


def headroom(model, *, name=None, **options):
    """`fuseplan headroom`: the largest batch (or context) that fits in the device's memory."""
    return _command("headroom", model, name, [], options)


def train(model, *, name=None, **options):
    """`fuseplan train`: the memory of a training step, the recompute plan and training headroom."""
    return _command("train", model, name, [], options)


def _policy_text(policy):
    """A policy given as a dict ({key: value}, or {group: {key: value}}) as the .ini text gate reads."""
    groups = policy if all(isinstance(v, dict) for v in policy.values()) else {"gate": policy}
    lines = []
    for group, keys in groups.items():
        lines.append(f"[{group}]")
        for k, v in keys.items():
            v = ", ".join(str(x) for x in v) if isinstance(v, (list, tuple)) else str(v).lower() \
                if isinstance(v, bool) else str(v)
            lines.append(f"{k} = {v}")
    return "\n".join(lines) + "\n"


def gate(model, policy, *, name=None, **options):
    """`fuseplan gate`: the policy's checks. policy: a policy file's path, or a dict of its [gate]
    keys ({"max_activation_mb": 64, ...}; written to a temporary file for the call). Returns the
    document when every check passes; raises Error (kind POLICY_FAILED, the document in .result)
    when one fails."""
    if isinstance(policy, dict):
        with tempfile.NamedTemporaryFile("w", suffix=".ini", prefix="fuseplan-policy-") as f:
            f.write(_policy_text(policy))
            f.flush()
            return _command("gate", model, name, ["--policy", f.name], options)
    return _command("gate", model, name, ["--policy", os.fspath(policy)], options)
