"""test_fuseplan.py - the Python package against the `fuseplan` executable: the same documents for
the sample models, a ModelProto built here analysed without a file, the executable's error lines,
and calls from several threads at once.

Run from the source tree: `make test` does, as
  PYTHONPATH=python FUSEPLAN_LIBRARY=build/libfuseplan.so.1 FUSEPLAN_CLI=build/fuseplan \
      /usr/bin/python3 -m pytest -q python/tests
"""
import json
import os
import subprocess
import threading

import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import fuseplan

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
CLI = os.path.join(ROOT, os.environ.get("FUSEPLAN_CLI", os.path.join("build", "fuseplan")))


@pytest.fixture(autouse=True)
def in_source_tree(monkeypatch):
    monkeypatch.chdir(ROOT)


def cli(*args):
    """The executable's (exit status, stdout, stderr)."""
    p = subprocess.run([CLI, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    rc, out, err = cli(*args)
    assert rc == 0, err
    return json.loads(out)


SAMPLES = ["models/resnet_tiny.onnx", "models/eps_story.onnx", "models/transformer_block.onnx",
           "models/decoder_tiny.onnx", "models/inception_bfs.onnx"]


@pytest.mark.parametrize("path", SAMPLES)
def test_report_is_the_cli_document(path):
    assert fuseplan.report(path) == cli_json("report", "-f", "json", path)


@pytest.mark.parametrize("call,args", [
    (lambda p: fuseplan.report(p, device="h100", dims={"batch": 4}),
     ["report", "--device", "h100", "--dim", "batch=4"]),
    (lambda p: fuseplan.explain(p, target="ascend910b"), ["explain", "--target", "ascend910b"]),
    (lambda p: fuseplan.memory(p, strategy="greedy_by_size"), ["memory", "--strategy", "greedy_by_size"]),
    (lambda p: fuseplan.headroom(p, device="ascend910b"), ["headroom", "--device", "ascend910b"]),
    (lambda p: fuseplan.train(p, budget="50%", optimizer="adam"), ["train", "--budget", "50%", "--optimizer", "adam"]),
    (lambda p: fuseplan.report(p, inputs={"input": [2, 3, 32, 32]}, verbose=True),
     ["report", "--input", "input:2x3x32x32", "--verbose"]),
])
def test_commands_and_options_are_the_cli_documents(call, args):
    path = "models/resnet_tiny.onnx"
    assert call(path) == cli_json(args[0], "-f", "json", *args[1:], path)


def test_bytes_under_the_file_name_are_the_file():
    path = "models/eps_story.onnx"
    with open(path, "rb") as f:
        data = f.read()
    assert fuseplan.report(data, name=path) == fuseplan.report(path)


def built_model():
    """Conv -> BatchNormalization -> Relu on a 1x3x16x16 input, built in memory."""
    rng = [float(i % 7) / 7 for i in range(8 * 3 * 3 * 3)]
    w = numpy_helper.from_array(__import__("numpy").array(rng, dtype="float32").reshape(8, 3, 3, 3), "w")
    bn = [numpy_helper.from_array(__import__("numpy").full(8, v, dtype="float32"), n)
          for n, v in (("scale", 1.0), ("bias", 0.0), ("mean", 0.0), ("var", 1.0))]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["b"], name="bn"),
             helper.make_node("Relu", ["b"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "built", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])], [w] + bn)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def test_model_proto_without_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    m = built_model()
    r = fuseplan.report(m, name="built.onnx")
    assert r["path"] == "built.onnx"
    assert not os.listdir(tmp_path)
    assert [s["ops"] for s in r["stages"][:2]] == [3, 1]  # Conv+BN+Relu: one FusedConv
    applied = sorted(f["rule"] for f in r["fusions"] if f["applied"])
    assert applied == ["conv_activation", "conv_bn"]
    # the same document as the executable's on the same bytes written to a file
    with open("built.onnx", "wb") as f:
        f.write(m.SerializeToString())
    assert r == cli_json("report", "-f", "json", "built.onnx")


def test_bad_input_raises_the_cli_message():
    for args, kw in ((["models/no-such.onnx"], {}), (["models/resnet_tiny.onnx"], {"device": "nowhere"}),
                     (["models/resnet_tiny.onnx"], {"dims": {"nosuch": 3}})):
        with pytest.raises(fuseplan.Error) as e:
            fuseplan.report(args[0], **kw)
        opts = [a for k, v in kw.items() for a in
                (("--dim", f"{next(iter(v))}={v[next(iter(v))]}") if k == "dims" else (f"--{k}", v))]
        rc, out, err = cli("report", "-f", "json", *opts, args[0])
        assert (e.value.exit_code, e.value.kind, e.value.message) == (rc, fuseplan.BAD_INPUT, err.strip())
        assert e.value.message.startswith("fuseplan: ") and e.value.result is None
    with pytest.raises(fuseplan.Error) as e:
        fuseplan.report(b"garbage bytes", name="junk.onnx")
    assert e.value.message.startswith("fuseplan: junk.onnx: unrecognized format")
    with pytest.raises(TypeError):
        fuseplan.report(42)
    with pytest.raises(TypeError):
        fuseplan.report("models/resnet_tiny.onnx", format="text")


def test_gate_passes_and_fails_as_the_cli():
    model, strict = "models/eps_story.onnx", "tests/data/policies/strict.ini"
    assert fuseplan.gate(model, "tests/data/policies/pass.ini") == \
        cli_json("gate", "-f", "json", "--policy", "tests/data/policies/pass.ini", model)
    with pytest.raises(fuseplan.Error) as e:
        fuseplan.gate(model, strict)
    rc, out, err = cli("gate", "-f", "json", "--policy", strict, model)
    assert (e.value.exit_code, e.value.kind, e.value.result) == (1, fuseplan.POLICY_FAILED, json.loads(out))
    assert e.value.result["verdict"] == "fail"
    assert [c["status"] for c in e.value.result["checks"]] == ["pass", "pass", "fail"]
    # a policy as a dict: its [gate] keys
    g = fuseplan.gate(model, {"max_activation_mb": 10, "forbid_unfused": ["conv_bn"]}, device="cpu-avx2")
    assert g["verdict"] == "pass" and [c["name"] for c in g["checks"]] == ["max_activation_mb",
                                                                         "forbid_unfused.conv_bn"]
    with pytest.raises(fuseplan.Error) as e:
        fuseplan.gate(model, {"max_activation_mb": 0.001})
    assert e.value.kind == fuseplan.POLICY_FAILED
    with pytest.raises(fuseplan.Error) as e:
        fuseplan.gate(model, {"max_activation_gb": 1})
    assert e.value.kind == fuseplan.BAD_INPUT and "max_activation_gb" in e.value.message


def test_warning_for_an_unknown_op():
    g = helper.make_graph([helper.make_node("Frobnicate", ["x"], ["y"], name="f", domain="example.com")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("example.com", 1)])
    with pytest.warns(fuseplan.FuseplanWarning, match="Frobnicate"):
        r = fuseplan.report(m, name="frob.onnx")
    assert r["path"] == "frob.onnx"


def test_threads_at_once():
    jobs = {"models/resnet_tiny.onnx": fuseplan.report("models/resnet_tiny.onnx"),
            "models/transformer_block.onnx": fuseplan.explain("models/transformer_block.onnx")}
    with open("models/decoder_tiny.onnx", "rb") as f:
        dec = f.read()
    jobs["decoder"] = fuseplan.report(dec, name="dec.onnx")
    calls = {"models/resnet_tiny.onnx": lambda: fuseplan.report("models/resnet_tiny.onnx"),
             "models/transformer_block.onnx": lambda: fuseplan.explain("models/transformer_block.onnx"),
             "decoder": lambda: fuseplan.report(dec, name="dec.onnx")}
    bad = []

    def work(key):
        for _ in range(8):
            if calls[key]() != jobs[key]:
                bad.append(key)
        try:
            fuseplan.report("models/no-such.onnx")
        except fuseplan.Error as e:
            if "no-such.onnx: cannot open" not in e.message:
                bad.append(e.message)

    threads = [threading.Thread(target=work, args=(k,)) for k in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == []


def test_version():
    rc, out, _ = cli("--version")
    assert out.strip() == "fuseplan " + fuseplan.version()
