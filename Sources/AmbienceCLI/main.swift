import Ambience

print("ambience")
