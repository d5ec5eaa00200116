# Writes the notebooks of notebook_test.go the way nbformat does (json.dumps with
# sort_keys, ensure_ascii=False and an indent), with indents of 1 and 2, and the
# expected results of edits, computed by editing the parsed notebook and writing it
# whole again: an edit that rewrites only its cell must give the same bytes.
# Run: python3 gen.py (from this folder).
import copy, json

def write(nb, indent):
    return json.dumps(nb, sort_keys=True, indent=indent, ensure_ascii=False) + "\n"

nb = {
    "nbformat": 4, "nbformat_minor": 5,
    "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python", "version": "3.12.0"},
    },
    "cells": [
        {"cell_type": "markdown", "id": "intro", "metadata": {},
         "source": ["# Démo <b>&amp;</b>\n", "Some *text*."]},
        {"cell_type": "code", "execution_count": 1, "id": "load", "metadata": {"tags": ["setup"]},
         "outputs": [
             {"name": "stdout", "output_type": "stream", "text": ["loaded 3 rows\n", "ok\n"]},
             {"data": {"image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==",
                       "text/plain": ["<Figure size 640x480 with 1 Axes>"]},
              "metadata": {}, "output_type": "display_data"},
         ],
         "source": ["import data\n", "rows = data.load()\n", "print(f\"loaded {len(rows)} rows\")"]},
        {"cell_type": "code", "execution_count": 2, "id": "fail", "metadata": {},
         "outputs": [
             {"ename": "ZeroDivisionError", "evalue": "division by zero", "output_type": "error",
              "traceback": ["\u001b[0;31mZeroDivisionError\u001b[0m Traceback (most recent call last)", "\u001b[0;31mZeroDivisionError\u001b[0m: division by zero"]},
             {"data": {"text/plain": ["42"]}, "execution_count": 2, "metadata": {}, "output_type": "execute_result"},
         ],
         "source": ["1 / 0"]},
    ],
}

def replaced(nb, i, source, typ=None):
    nb = copy.deepcopy(nb)
    c = nb["cells"][i]
    typ = typ or c["cell_type"]
    c["cell_type"] = typ
    if typ == "code":
        c["execution_count"] = None
        c["outputs"] = []
    else:
        c.pop("execution_count", None)
        c.pop("outputs", None)
    c["source"] = source.splitlines(keepends=True)
    return nb

def inserted(nb, at, source, typ):
    nb = copy.deepcopy(nb)
    c = {"cell_type": typ, "id": "NEWID", "metadata": {}, "source": source.splitlines(keepends=True)}
    if typ == "code":
        c["execution_count"] = None
        c["outputs"] = []
    nb["cells"].insert(at, c)
    return nb

def deleted(nb, i):
    nb = copy.deepcopy(nb)
    del nb["cells"][i]
    return nb

empty = copy.deepcopy(nb)
empty["cells"] = []

results = {
    "replace-load": replaced(nb, 1, "import data\nrows = data.load(strict=True)\n"),
    "replace-intro-as-code": replaced(nb, 0, "print('hi')", "code"),
    "replace-fail-as-markdown": replaced(nb, 2, "Division *fails*.\n", "markdown"),
    "insert-after-load": inserted(nb, 2, "rows[:5]", "code"),
    "insert-first": inserted(nb, 0, "## Start", "markdown"),
    "insert-last": inserted(nb, 3, "done = True", "code"),
    "delete-intro": deleted(nb, 0),
    "delete-load": deleted(nb, 1),
    "delete-fail": deleted(nb, 2),
}
for indent in (1, 2):
    open(f"nb{indent}.ipynb", "w").write(write(nb, indent))
    open(f"empty{indent}.ipynb", "w").write(write(empty, indent))
    open(f"empty{indent}.insert.ipynb", "w").write(write(inserted(empty, 0, "x = 1", "code"), indent))
    for name, r in results.items():
        open(f"nb{indent}.{name}.ipynb", "w").write(write(r, indent))
one = copy.deepcopy(nb)
one["cells"] = one["cells"][:1]
for indent in (1, 2):
    open(f"one{indent}.ipynb", "w").write(write(one, indent))
    open(f"one{indent}.delete.ipynb", "w").write(write(deleted(one, 0), indent))
