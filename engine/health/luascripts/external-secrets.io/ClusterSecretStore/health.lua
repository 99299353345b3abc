-- Health of an External Secrets Operator ClusterSecretStore, from its Ready condition
-- (set once the controller has validated the provider configuration).

local function messageOf(c, default)
  if type(c.message) == "string" and c.message ~= "" then
    return c.message
  end
  if type(c.reason) == "string" and c.reason ~= "" then
    return default .. ": " .. c.reason
  end
  return default
end

local waiting = "Waiting for ClusterSecretStore to be validated"

if obj.status ~= nil and type(obj.status.conditions) == "table" then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" then
      if c.status == "True" then
        return {status = "Healthy", message = messageOf(c, "ClusterSecretStore is valid")}
      end
      if c.status == "False" then
        return {status = "Degraded", message = messageOf(c, "ClusterSecretStore is not valid")}
      end
      return {status = "Progressing", message = messageOf(c, waiting)}
    end
  end
end

return {status = "Progressing", message = waiting}
