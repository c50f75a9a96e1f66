import os
import sys

# client.py beside the tests, whatever pytest's rootdir and import mode
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
