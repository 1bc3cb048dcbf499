"""`python -m gradcli` is the `gradcli` command."""
from gradcli.cli import main

main()
