try:
    total = sum(range(10**12))
except BaseException:
    print("never printed")
