-- Health of a Flux object (Kustomization, HelmRelease) following Flux's
-- kstatus-compatible conditions:
--   spec.suspend                               -> Suspended
--   Stalled=True                               -> Degraded
--   Ready=False (not being reconciled again)   -> Degraded
--   observedGeneration behind generation       -> Progressing
--   Reconciling=True                           -> Progressing
--   Ready=True                                 -> Healthy
--   anything else                              -> Progressing
-- After a failed attempt Flux keeps Reconciling=True with reason
-- ProgressingWithRetry; that is a failure waiting for a retry, not progress.

local kind = obj.kind
if type(kind) ~= "string" or kind == "" then
  kind = "Resource"
end

local function messageOf(c, default)
  if c ~= nil then
    if type(c.message) == "string" and c.message ~= "" then
      return c.message
    end
    if type(c.reason) == "string" and c.reason ~= "" then
      return c.reason
    end
  end
  return default
end

local spec = obj.spec or {}
if spec.suspend == true then
  return {status = "Suspended", message = kind .. " reconciliation is suspended"}
end

local waiting = "Waiting for " .. kind .. " to be reconciled"
local status = obj.status
if status == nil or type(status.conditions) ~= "table" then
  return {status = "Progressing", message = waiting}
end

local cond = {}
for _, c in ipairs(status.conditions) do
  if type(c.type) == "string" then
    cond[c.type] = c
  end
end
local ready = cond["Ready"]
local reconciling = cond["Reconciling"]
local stalled = cond["Stalled"]

if stalled ~= nil and stalled.status == "True" then
  return {status = "Degraded", message = messageOf(stalled, kind .. " reconciliation is stalled")}
end

local inProgress = reconciling ~= nil and reconciling.status == "True"
    and reconciling.reason ~= "ProgressingWithRetry"

if ready ~= nil and ready.status == "False" and not inProgress then
  return {status = "Degraded", message = messageOf(ready, kind .. " is not ready")}
end

local meta = obj.metadata or {}
local observed = tonumber(status.observedGeneration)
local generation = tonumber(meta.generation)
if observed ~= nil and generation ~= nil and observed < generation then
  return {status = "Progressing", message = "Waiting for " .. kind .. " spec update to be reconciled"}
end

if inProgress then
  return {status = "Progressing", message = messageOf(reconciling, messageOf(ready, waiting))}
end

if ready ~= nil and ready.status == "True" then
  return {status = "Healthy", message = messageOf(ready, kind .. " is ready")}
end

return {status = "Progressing", message = messageOf(ready, waiting)}
