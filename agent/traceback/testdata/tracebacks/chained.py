import json

try:
    {}["missing"]
except KeyError:
    json.loads("not json")
