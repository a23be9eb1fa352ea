"""Runs a notebook end to end in a fresh kernel (nbclient), from the repository root, and fails
on the first cell that raises. Usage: run_notebook.py NOTEBOOK.ipynb"""

import os
import sys

import nbclient
import nbformat


def main(path):
    notebook = nbformat.read(path, as_version=4)
    # The kernel is this interpreter (the one the module was built for), whatever the
    # notebook's metadata names; it inherits PYTHONPATH, so `import gpuplan` finds the build.
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": os.getcwd()}})
    client.execute()
    print(f"{path}: {len(notebook.cells)} cells ran")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
