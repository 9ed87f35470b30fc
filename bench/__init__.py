"""The benchmark suite of hpo: ``make bench`` runs ``bench/run_all.py``."""
