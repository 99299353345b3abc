-- Health of Crossplane objects: managed resources, composite resources and
-- claims, packages (Provider, Function, Configuration) and definitions.
--   Synced=False or LastAsyncOperation=False     -> Degraded
--   Ready=True                                   -> Healthy
--   no Ready condition, but Healthy/Established/
--   Offered=True (packages, XRDs)                -> Healthy
--   configuration kinds that never report status -> Healthy
--   anything else (including no status)          -> Progressing

local kind = obj.kind
local status = obj.status
if type(status) ~= "table" then
  status = nil
end

local function isEmpty(t)
  return t == nil or next(t) == nil
end

local function messageOf(c, default)
  if type(c.message) == "string" and c.message ~= "" then
    return c.message
  end
  if type(c.reason) == "string" and c.reason ~= "" then
    return default .. ": " .. c.reason
  end
  return default
end

-- Kinds that carry configuration only and have no conditions.
local statusless = {
  Composition = true,
  CompositionRevision = true,
  EnvironmentConfig = true,
  DeploymentRuntimeConfig = true,
  ControllerConfig = true,
  ProviderConfig = true,
  ClusterProviderConfig = true,
  ProviderConfigUsage = true,
  ClusterProviderConfigUsage = true,
}

local waiting = "Waiting for resource to become ready"

if isEmpty(status) or type(status.conditions) ~= "table" or #status.conditions == 0 then
  if statusless[kind] then
    if status ~= nil and status.users ~= nil then
      return {status = "Healthy", message = "Resource is in use"}
    end
    return {status = "Healthy", message = "Resource is up-to-date"}
  end
  return {status = "Progressing", message = waiting}
end

local cond = {}
for _, c in ipairs(status.conditions) do
  if type(c.type) == "string" then
    cond[c.type] = c
  end
end

local synced = cond["Synced"]
if synced ~= nil and synced.status == "False" then
  return {status = "Degraded", message = messageOf(synced, "Resource is not synced")}
end

local async = cond["LastAsyncOperation"]
if async ~= nil and async.status == "False" then
  return {status = "Degraded", message = messageOf(async, "Last asynchronous operation failed")}
end

local ready = cond["Ready"]
if ready ~= nil then
  if ready.status == "True" then
    return {status = "Healthy", message = "Resource is up-to-date"}
  end
  return {status = "Progressing", message = messageOf(ready, waiting)}
end

for _, t in ipairs({"Healthy", "Established", "Offered"}) do
  local c = cond[t]
  if c ~= nil and c.status == "True" then
    return {status = "Healthy", message = "Resource is up-to-date"}
  end
end

return {status = "Progressing", message = waiting}
