"""The command-line tools' shared argparse set-up (private)."""
