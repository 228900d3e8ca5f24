"""Regenerate ikstack's bundled sample dataset (src/ikstack/robots/data/samples).

Usage: ``python benchmarks/make_sample_dataset.py [--folder DIR] [--episodes 3] [--frames 200]``
"""

from ikstack.jobs.samples import main

if __name__ == "__main__":
    main()
