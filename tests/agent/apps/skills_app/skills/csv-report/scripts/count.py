import sys
rows = open(sys.argv[1]).read().strip().splitlines()
print(f"{len(rows) - 1} rows")
