-- Health of a KEDA ScaledObject.
--   paused (Paused=True condition, or the autoscaling.keda.sh/paused-replicas
--   or autoscaling.keda.sh/paused annotation)            -> Suspended
--   Ready=False, or Fallback=True (scaler failing)       -> Degraded
--   Ready=True                                           -> Healthy
--   otherwise                                            -> Progressing

local function messageOf(c, default)
  if type(c.message) == "string" and c.message ~= "" then
    return c.message
  end
  if type(c.reason) == "string" and c.reason ~= "" then
    return default .. ": " .. c.reason
  end
  return default
end

local cond = {}
if obj.status ~= nil and type(obj.status.conditions) == "table" then
  for _, c in ipairs(obj.status.conditions) do
    if type(c.type) == "string" then
      cond[c.type] = c
    end
  end
end

local paused = cond["Paused"]
if paused ~= nil and paused.status == "True" then
  return {status = "Suspended", message = messageOf(paused, "ScaledObject is paused")}
end

local annotations = (obj.metadata or {}).annotations or {}
local pausedReplicas = annotations["autoscaling.keda.sh/paused-replicas"]
if pausedReplicas ~= nil then
  return {status = "Suspended", message = "ScaledObject is paused at " .. tostring(pausedReplicas) .. " replicas"}
end
if annotations["autoscaling.keda.sh/paused"] == "true" then
  return {status = "Suspended", message = "ScaledObject is paused"}
end

local ready = cond["Ready"]
if ready ~= nil and ready.status == "False" then
  return {status = "Degraded", message = messageOf(ready, "ScaledObject is not ready")}
end

local fallback = cond["Fallback"]
if fallback ~= nil and fallback.status == "True" then
  return {status = "Degraded", message = messageOf(fallback, "ScaledObject is using fallback replicas")}
end

if ready ~= nil and ready.status == "True" then
  return {status = "Healthy", message = messageOf(ready, "ScaledObject is ready")}
end

return {status = "Progressing", message = "Waiting for ScaledObject to become ready"}
