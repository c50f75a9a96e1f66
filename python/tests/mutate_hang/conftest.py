import os
import sys

# the sample client of ../mutate
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mutate"))
