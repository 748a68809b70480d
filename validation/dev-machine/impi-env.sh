#!/usr/bin/env bash
# Intel MPI 2021.13's runtime from PyPI (the impi-rt wheel) as a usable
# MPI on this machine (VALIDATION.md 4.24): unpacks it into DIR, writes
# DIR/bin/impicc (gcc with MPICH's headers, the MPICH ABI, linked with
# Intel's libmpi) and DIR/env.sh, which puts Intel's mpiexec and impicc on
# the PATH. Usage:
#   bash validation/dev-machine/impi-env.sh DIR && . DIR/env.sh
#   RUN="mpiexec -n 2" MPICC=impicc TAG=impi ... bash validation/dev-machine/osu-rounds.sh OMB_BIN
set -euo pipefail
D=$(mkdir -p "$1" && cd "$1" && pwd)
pip download impi-rt==2021.13.1 --no-deps -q -d "$D"
unzip -q -o "$D"/impi_rt-2021.13.1-*.whl -d "$D"
R=$D/impi_rt-2021.13.1.data/data
chmod +x "$R"/bin/* "$R"/bin/libfabric/* 2>/dev/null || true
mkdir -p "$D/bin"
cat > "$D/bin/impicc" <<WRAP
#!/bin/sh
exec gcc -I/usr/include/x86_64-linux-gnu/mpich "\$@" -L$R/lib -lmpi -Wl,-rpath,$R/lib
WRAP
chmod +x "$D/bin/impicc"
cat > "$D/env.sh" <<ENV
export I_MPI_ROOT=$R PATH=$R/bin:$D/bin:\$PATH LD_LIBRARY_PATH=$R/lib:$R/lib/libfabric FI_PROVIDER_PATH=$R/lib/libfabric/prov
ENV
echo "written $D/env.sh; then: . $D/env.sh"
