#!/bin/sh
# seeds.sh OUT - writes the seed corpus of every fuzz target to OUT/<target>/ and the dictionaries of
# the text targets to OUT/<target>.dict, from the committed sample models, tests/data, a sample of
# Debian's libonnx-testdata, the hand-written seeds of tests/fuzz/seeds/ and every regression input
# of tests/fuzz-regressions/. Generated at fuzz time, never committed. Weights over 4 KiB are
# dropped from the ONNX seeds (protoc decode, then encode): fuseplan never reads them, and small
# inputs fuzz faster.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
proto_dir=/usr/include/onnx
testdata=/usr/share/libonnx-testdata/data
for t in onnx onnx_text ge ini input_spec genai_config; do
    mkdir -p "$out/$t"
done

# ONNX text of a binary model with its big raw_data payloads removed.
to_text() {
    protoc --decode=onnx.ModelProto --proto_path="$proto_dir" "$proto_dir/onnx.proto" <"$1" |
        awk '!(length($0) > 16384 && $1 == "raw_data:")'
}

# onnx and onnx_text: the sample models, and every 3rd libonnx-testdata model under 16 KiB
{
    ls "$root"/models/*.onnx
    find "$testdata" -name model.onnx -size -16k | sort | awk 'NR % 3 == 1'
} | while read -r f; do
    name=$(echo "$f" | sed "s|^$root/models/||; s|^$testdata/||; s|/model.onnx\$||; s|\.onnx\$||; s|/|_|g")
    to_text "$f" >"$out/onnx_text/$name.pbtxt"
    protoc --encode=onnx.ModelProto --proto_path="$proto_dir" "$proto_dir/onnx.proto" \
        <"$out/onnx_text/$name.pbtxt" >"$out/onnx/$name.onnx"
done
cp "$root"/tests/data/ge/*.pbtxt "$out/onnx_text/"

# ge: the GE dumps of tests/data/ge (text, .om, JSON), decompressed
for f in "$root"/tests/data/ge/*; do
    base=$(basename "$f")
    case "$base" in
    *.md) ;;
    *.gz) gzip -dc "$f" >"$out/ge/${base%.gz}" ;;
    *) cp "$f" "$out/ge/$base" ;;
    esac
done

# ini: shipped device profiles and targets, test profiles
cp "$root"/devices/*.ini "$root"/tests/data/devices/*.ini "$out/ini/"
for f in "$root"/passes/fusion/targets/*.ini; do
    cp "$f" "$out/ini/target_$(basename "$f")"
done

# genai_config: the int4 sample's config
cp "$root"/models/genai_config.json "$out/genai_config/"

# hand-written seeds and regression inputs, per target
for t in onnx onnx_text ge ini input_spec genai_config; do
    for d in "$root/tests/fuzz/seeds/$t" "$root/tests/fuzz-regressions/$t"; do
        if [ -d "$d" ] && [ -n "$(ls -A "$d")" ]; then
            cp "$d"/* "$out/$t/"
        fi
    done
done
# dictionaries of the text formats: field and enum names of the schemas, text-format tokens
dict() { # PROTO: one "name" line per field name and enum constant
    sed -E 's|//.*||' "$1" | grep -oE '(^|[[:space:]])[A-Za-z_][A-Za-z_0-9]*[[:space:]]*=[[:space:]]*[0-9]+' |
        sed -E 's/^[[:space:]]*([A-Za-z_0-9]+).*/"\1"/' | sort -u
    printf '"%s"\n' '{' '}' ':' '[' ']' '#' 'inf' 'nan' 'true' '-' '\"'
}
dict "$proto_dir/onnx.proto" >"$out/onnx_text.dict"
{
    dict "$root/frontends/ge/ge_ir.proto"
    printf '"%s"\n' IMOD 'op {' 'type: ' 'input: ' 'attr {' 'key: ' Data NetOutput Conv2D TransData Cast Const
} >"$out/ge.dict"
# .ini: groups and keys of device profiles, targets and gate policies, GKeyFile syntax
printf '"%s"\n' '[device]' '[peak]' '[efficiency]' '[saturation]' '[launch]' '[cache]' '[calibration]' '[target]' '[layout]' '[gate]' '[rule.' \
    description target bandwidth memory_bytes launch_overhead align_bytes fp32 fp16 bf16 int8 int4 \
    conv matmul elementwise other name rules drop_narrowing_casts max_epsilon activations dtypes \
    nchwc_block nchwc expand precision_mode force_fp16 must_keep_origin_dtype HardSwish instead opset \
    max_activation_mb max_total_mb min_headroom_batch min_est_speedup forbid_unfused max_layout_conversions \
    '=' '\x0A' ',' ';' '1e308' '-1' 'nan' '\\' >"$out/ini.dict"
printf '"%s"\n' ':' 'x' ',' '?' '4611686018427387904' '18446744073709551616' '-1' >"$out/input_spec.dict"
printf '"%s"\n' '{' '}' '[' ']' ':' ',' 'true' 'false' 'null' '-1' '4611686018427387904' '%d' '%s' model decoder search \
    filename num_hidden_layers num_key_value_heads head_size hidden_size inputs outputs past_key_names \
    past_value_names present_key_names present_value_names past_names present_names max_length \
    context_length past_present_share_buffer >"$out/genai_config.dict"
for t in onnx onnx_text ge ini input_spec genai_config; do
    printf '%s: %s seeds\n' "$t" "$(ls "$out/$t" | wc -l)"
done
