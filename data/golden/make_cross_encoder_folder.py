#!/usr/bin/env python3
"""A Hugging Face BertForSequenceClassification folder (a sentence-transformers CrossEncoder) from a
plain BERT folder and a classifier head (issue 50). Standard library only (safetensors read and
written by hand):

  python3 data/golden/make_cross_encoder_folder.py SRC_MODEL HEAD_SAFETENSORS DST

SRC_MODEL is a BertModel folder such as data/bert-tiny-random: config.json, model.safetensors or
sharded model-*.safetensors with model.safetensors.index.json, and tokenizer files. HEAD_SAFETENSORS
holds exactly classifier.weight [K, H] and classifier.bias [K] (float32, H = hidden_size). DST gets:
- config.json: SRC's, with "architectures": ["BertForSequenceClassification"] and transformers'
  default "id2label" {"0": "LABEL_0", ...} / "label2id" {"LABEL_0": 0, ...} for K labels (which is
  how transformers and CrossEncoder read num_labels = K); nothing else changed. Written as
  transformers writes it (indent 2, keys sorted).
- model.safetensors: every encoder tensor of SRC named "bert." + its name (a name that already
  starts with "bert." is kept; a pretraining head, "cls.*", is dropped), plus classifier.weight and
  classifier.bias; keys sorted, data in that order, dtypes and bytes as they were; metadata
  {"format": "pt"}, the header padded with spaces to a multiple of 8 bytes.
- vocab.txt, tokenizer.json, tokenizer_config.json, special_tokens_map.json: copied when present.
Prints the tensors written and K.
"""
import json
import os
import shutil
import struct
import sys

TOKENIZER_FILES = ["vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]
DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
               "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}


def read_safetensors(path):
    """(metadata or None, {name: (dtype, shape, raw bytes)}) of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        sys.exit(f"{path}: not a safetensors file (shorter than 8 bytes)")
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        sys.exit(f"{path}: header length {n} runs past the end of the file")
    header = json.loads(data[8:8 + n].decode("utf-8"))
    body = data[8 + n:]
    metadata = header.pop("__metadata__", None)
    tensors = {}
    for name, info in header.items():
        dtype, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        count = 1
        for d in shape:
            count *= d
        if dtype not in DTYPE_BYTES or end - begin != count * DTYPE_BYTES[dtype] or end > len(body):
            sys.exit(f"{path}: tensor {name} ({dtype} {shape}) has data offsets {begin}..{end}")
        tensors[name] = (dtype, list(shape), body[begin:end])
    return metadata, tensors


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: (dtype, shape, raw bytes)} with the keys sorted, data in that order."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset = 0
    for name in sorted(tensors):
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name in sorted(tensors):
            f.write(tensors[name][2])


def read_model(src):
    """Every tensor of a model folder, from its index's shards or its one model.safetensors."""
    index = os.path.join(src, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index, encoding="utf-8") as f:
            weight_map = json.load(f)["weight_map"]
        shards = sorted(set(weight_map.values()))
    else:
        weight_map, shards = None, ["model.safetensors"]
    tensors = {}
    for shard in shards:
        _, part = read_safetensors(os.path.join(src, shard))
        for name, tensor in part.items():
            if name in tensors:
                sys.exit(f"{src}: tensor {name} is in more than one shard")
            tensors[name] = tensor
    if weight_map is not None and set(weight_map) != set(tensors):
        sys.exit(f"{src}: the index and the shards name different tensors")
    return tensors


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: make_cross_encoder_folder.py SRC_MODEL HEAD_SAFETENSORS DST")
    src, head_path, dst = sys.argv[1:]
    with open(os.path.join(src, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    hidden = config["hidden_size"]

    _, head = read_safetensors(head_path)
    if sorted(head) != ["classifier.bias", "classifier.weight"]:
        sys.exit(f"{head_path}: expected exactly classifier.weight and classifier.bias, got {sorted(head)}")
    w_dtype, w_shape, _ = head["classifier.weight"]
    b_dtype, b_shape, _ = head["classifier.bias"]
    if (w_dtype, b_dtype) != ("F32", "F32") or len(w_shape) != 2 or w_shape[1] != hidden \
            or b_shape != [w_shape[0]] or w_shape[0] < 1:
        sys.exit(f"{head_path}: expected float32 classifier.weight [K, {hidden}] and classifier.bias "
                 f"[K], got {w_dtype} {w_shape} and {b_dtype} {b_shape}")
    k = w_shape[0]

    tensors = {}
    for name, tensor in read_model(src).items():
        if name.startswith("cls."):
            continue  # a pretraining head (masked LM, next sentence): no part of the encoder
        if name.startswith("classifier."):
            sys.exit(f"{src}: already has a classifier ({name})")
        tensors[name if name.startswith("bert.") else "bert." + name] = tensor
    tensors.update(head)

    config["architectures"] = ["BertForSequenceClassification"]
    config["id2label"] = {str(i): f"LABEL_{i}" for i in range(k)}
    config["label2id"] = {f"LABEL_{i}": i for i in range(k)}

    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(dst, "config.json"), "w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")
    write_safetensors(os.path.join(dst, "model.safetensors"), tensors, {"format": "pt"})
    for name in TOKENIZER_FILES:
        if os.path.exists(os.path.join(src, name)):
            shutil.copyfile(os.path.join(src, name), os.path.join(dst, name))
    print(f"{dst}: {len(tensors)} tensors, {k} labels")


if __name__ == "__main__":
    main()
