"""One module per model: CVXPY primal and dual builders, numpy objectives, dual→primal map, KKT
residuals. The math, nothing else."""
