"""What is fetched when: request fingerprints, the seen-set, the not-before gate, queue length."""
