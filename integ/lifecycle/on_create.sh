#!/bin/bash
# Lifecycle entry script: HyperPod runs it on every node as the node is created.
# In Continuous mode HyperPod configures Slurm from each group's SlurmConfig, so this
# script only adds site-specific setup.
set -euo pipefail
echo "HyperPod node $(hostname) created; add site setup (mounts, users, packages) here."
