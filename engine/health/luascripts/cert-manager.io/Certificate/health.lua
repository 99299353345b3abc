-- Health of a cert-manager Certificate.
--   Issuing=True            -> Progressing (a new certificate is being issued)
--   Ready=True              -> Healthy
--   Ready=False             -> Degraded
--   Ready=Unknown / absent  -> Progressing

local function findCondition(conditions, condType)
  if type(conditions) ~= "table" then
    return nil
  end
  for _, c in ipairs(conditions) do
    if c.type == condType then
      return c
    end
  end
  return nil
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

local conditions = nil
if obj.status ~= nil then
  conditions = obj.status.conditions
end

local issuing = findCondition(conditions, "Issuing")
if issuing ~= nil and issuing.status == "True" then
  return {status = "Progressing", message = messageOf(issuing, "Issuing certificate")}
end

local ready = findCondition(conditions, "Ready")
if ready ~= nil then
  if ready.status == "True" then
    return {status = "Healthy", message = messageOf(ready, "Certificate is ready")}
  end
  if ready.status == "False" then
    return {status = "Degraded", message = messageOf(ready, "Certificate is not ready")}
  end
  return {status = "Progressing", message = messageOf(ready, "Waiting for certificate")}
end

return {status = "Progressing", message = "Waiting for certificate"}
