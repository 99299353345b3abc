-- Health of an External Secrets Operator ExternalSecret.
--
--   Ready=False (e.g. reason SecretSyncedError)  -> Degraded
--   spec change not yet synced                   -> Progressing
--   Ready=True                                   -> Healthy
--   Ready=Unknown / no Ready condition           -> Progressing
--
-- The controller records the synced spec in status.syncedResourceVersion as
-- "<metadata.generation>-<hash of labels and annotations>". A generation
-- prefix behind metadata.generation means the current spec has not been synced
-- yet, whatever the refresh policy; this is more reliable than comparing
-- status.refreshTime with condition timestamps.

local function messageOf(c, default)
  if type(c.message) == "string" and c.message ~= "" then
    return c.message
  end
  if type(c.reason) == "string" and c.reason ~= "" then
    return default .. ": " .. c.reason
  end
  return default
end

local waiting = "Waiting for ExternalSecret to be synced"
local status = obj.status
if status == nil then
  return {status = "Progressing", message = waiting}
end

local ready = nil
if type(status.conditions) == "table" then
  for _, c in ipairs(status.conditions) do
    if c.type == "Ready" then
      ready = c
    end
  end
end

if ready ~= nil and ready.status == "False" then
  if ready.reason == "SecretSyncedError" then
    return {status = "Degraded", message = messageOf(ready, "Could not sync secret")}
  end
  return {status = "Degraded", message = messageOf(ready, "ExternalSecret is not ready")}
end

local meta = obj.metadata or {}
local generation = tonumber(meta.generation)
if type(status.syncedResourceVersion) == "string" and generation ~= nil then
  local prefix = string.match(status.syncedResourceVersion, "^(%d+)%-")
  local synced = nil
  if prefix ~= nil then
    synced = tonumber(prefix)
  end
  if synced ~= nil and synced < generation then
    return {status = "Progressing", message = "Waiting for ExternalSecret spec update to be synced"}
  end
end

if ready ~= nil and ready.status == "True" then
  return {status = "Healthy", message = messageOf(ready, "Secret was synced")}
end
if ready ~= nil then
  return {status = "Progressing", message = messageOf(ready, waiting)}
end
return {status = "Progressing", message = waiting}
