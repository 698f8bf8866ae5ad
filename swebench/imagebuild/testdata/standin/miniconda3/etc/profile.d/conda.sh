# Stand-in for Miniconda's conda.sh (swebox tests): the same as bin/activate.
source /opt/miniconda3/bin/activate
