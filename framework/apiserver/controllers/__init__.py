"""In-process controllers the real control plane runs beside kube-apiserver (kube-controller-manager's and
kube-apiserver's own: namespace deletion, garbage collection, CRD establishing, aggregation).
"""
