#!/usr/bin/env python3
"""Results as JSON Lines, and back.

  jsonl.py pack FILE.json > FILE.jsonl     a file of `numalock bench --json`,
                                           `numalock compare --json` or JMH's
                                           -rf json, one JSON value a line
  jsonl.py unpack FILE.jsonl > FILE.json   the same data as the original file
                                           (what tools/report.py reads)

Every line is an object with one key that names what it holds:
  {"meta": {...}}     the file's meta (the command, machine, ...): first line
  {"record": {...}}   one record (a bench record, a run of `compare`, a JMH result)
  {"summary": {...}}  one summary row of `numalock compare`
A file written as a JSON array (JMH) has record lines only and unpacks to an
array; one written as an object unpacks to {"meta": ..., "records": [...],
"summary": [...]} with the keys in that order (summary only where it was).
"""
import json
import sys


def pack(data):
    if isinstance(data, list):
        return [{"record": r} for r in data]
    lines = []
    for key, value in data.items():
        if key == "meta":
            lines.append({"meta": value})
        elif key == "records":
            lines.extend({"record": r} for r in value)
        elif key == "summary":
            lines.extend({"summary": s} for s in value)
        else:
            raise SystemExit(f"jsonl.py: unexpected top-level key '{key}'")
    return lines


def unpack(lines):
    if lines and all("record" in l for l in lines) and not any("meta" in l for l in lines):
        return [l["record"] for l in lines]
    out = {}
    for l in lines:
        (key, value), = l.items()
        if key == "meta":
            out["meta"] = value
        elif key == "record":
            out.setdefault("records", []).append(value)
        elif key == "summary":
            out.setdefault("summary", []).append(value)
        else:
            raise SystemExit(f"jsonl.py: unexpected line key '{key}'")
    return out


def main(argv):
    if len(argv) != 3 or argv[1] not in ("pack", "unpack"):
        raise SystemExit(__doc__.strip())
    with open(argv[2], encoding="utf-8") as f:
        if argv[1] == "pack":
            for line in pack(json.load(f)):
                print(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
        else:
            lines = [json.loads(l) for l in f if l.strip()]
            json.dump(unpack(lines), sys.stdout, ensure_ascii=False, indent=2)
            print()


if __name__ == "__main__":
    main(sys.argv)
