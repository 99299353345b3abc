-- Health of a Bitnami SealedSecret, from the controller's Synced condition.
--   Synced=True                          -> Healthy
--   Synced=False                         -> Degraded (e.g. the secret cannot be decrypted)
--   no condition / spec not yet observed -> Progressing

local waiting = "Waiting for SealedSecret to be unsealed"
local status = obj.status
if status == nil then
  return {status = "Progressing", message = waiting}
end

local synced = nil
if type(status.conditions) == "table" then
  for _, c in ipairs(status.conditions) do
    if c.type == "Synced" then
      synced = c
    end
  end
end

if synced ~= nil and synced.status == "False" then
  local message = synced.message
  if type(message) ~= "string" or message == "" then
    message = "Failed to unseal secret"
  end
  return {status = "Degraded", message = message}
end

local meta = obj.metadata or {}
local observed = tonumber(status.observedGeneration)
local generation = tonumber(meta.generation)
if observed ~= nil and generation ~= nil and observed < generation then
  return {status = "Progressing", message = waiting}
end

if synced ~= nil and synced.status == "True" then
  return {status = "Healthy", message = "Secret was unsealed"}
end
return {status = "Progressing", message = waiting}
