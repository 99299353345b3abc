// Top-level arguments, an external variable, a library from libs and a
// file next to this one.
local k = import 'k.libsonnet';
local labels = import 'labels.libsonnet';
function(name, replicas=1)
  k.configMap(name, { env: std.extVar('env'), replicas: std.toString(replicas) }) + { metadata+: { labels: labels } }
